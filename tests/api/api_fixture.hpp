// What the public API's tests share: the Fashion-MNIST slice loaded through
// load_data, a small MLP and a quiet two-replica run.
#pragma once

#include <catch2/catch.hpp>

#include <cstdio>
#include <random>
#include <string>
#include <vector>

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

/// Returns `count` samples of y = x0 - 2 x1 + x2 x3, x uniform in [-1, 1]^4:
/// a regression a hidden layer can learn.
inline troupe::dataset regression_set(int count, unsigned seed) {
  std::mt19937 random(seed);
  std::uniform_real_distribution<float> draw(-1.0f, 1.0f);
  std::vector<float> x, y;
  for (int n = 0; n < count; ++n) {
    float row[4];
    for (float& v : row)
      v = draw(random);
    x.insert(x.end(), row, row + 4);
    y.push_back(row[0] - 2 * row[1] + row[2] * row[3]);
  }
  return *troupe::make_regression_dataset(std::move(x), std::move(y), 4, 1);
}

/// Saves `model` to `path`, loads it back, checks that it predicts `data`
/// exactly as `model` does, and returns the loaded model.
inline troupe::trained_model saved_and_loaded(const troupe::trained_model& model,
                                              const std::string& path,
                                              const troupe::dataset& data) {
  REQUIRE(model.save(path));
  auto loaded = troupe::load_model(path);
  std::remove(path.c_str());
  REQUIRE(loaded);
  auto before = model.predict(data);
  auto after = loaded->predict(data);
  REQUIRE(before);
  REQUIRE(after);
  CHECK(*before == *after);
  return *loaded;
}

inline troupe::fit_options quiet_run() {
  return troupe::fit_options().epochs(2).replicas(2).seed(7).quiet();
}

} // namespace api_fixture
