// What the public API's tests share: the Fashion-MNIST slice loaded through
// load_data, a small MLP and a quiet two-replica run.
#pragma once

#include <catch2/catch.hpp>

#include <troupe/troupe.hpp>

namespace api_fixture {

inline const troupe::dataset_pair& slice() {
  static const troupe::dataset_pair data = [] {
    auto train = troupe::load_data(TROUPE_TEST_DATA_DIR);
    REQUIRE(train);
    troupe::dataset_pair pair;
    pair.train = std::move(*train);
    auto test = troupe::load_data(TROUPE_TEST_DATA_DIR, troupe::data_split::test);
    REQUIRE(test);
    pair.test = std::move(*test);
    return pair;
  }();
  return data;
}

inline troupe::sequential small_mlp() {
  troupe::sequential model(784, {troupe::layers::dense(32, "relu"),
                                 troupe::layers::dense(10, "softmax")});
  model.compile(troupe::optimizers::adam(), "sparse_categorical_crossentropy", {"accuracy"});
  return model;
}

inline troupe::fit_options quiet_run() {
  return troupe::fit_options().epochs(2).replicas(2).seed(7).quiet();
}

} // namespace api_fixture
