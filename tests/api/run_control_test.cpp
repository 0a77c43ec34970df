// Controlling a run's learning rate and what it scores: reduce_on_plateau as
// Keras's ReduceLROnPlateau (its factor kept by checkpoints), the reported
// learning rate, validation_split, and metrics beyond accuracy.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include <troupe/troupe.hpp>

#include "api_fixture.hpp"

namespace {

using api_fixture::quiet_run;
using api_fixture::regression_set;
using api_fixture::slice;
using api_fixture::small_mlp;

troupe::epoch_result epoch_with(uint32_t number, double val_loss, double learning_rate) {
  troupe::epoch_result e;
  e.epoch = number;
  e.val_loss = val_loss;
  e.learning_rate = learning_rate;
  return e;
}


// Whether a value is in a list of names.
bool names(const std::vector<std::pair<std::string, double>>& metrics, const std::string& name) {
  for (const auto& m : metrics)
    if (m.first == name)
      return true;
  return false;
}

} // namespace

TEST_CASE("reduce_on_plateau scales the rate as Keras's ReduceLROnPlateau: patience, "
          "cooldown, min_lr",
          "[api][callbacks][plateau]") {
  auto plateau = troupe::callbacks::reduce_on_plateau("val_loss", 0.5, 2, 0.0, 1, 0.3);
  REQUIRE(plateau->check({"loss", "val_loss", "learning_rate"}));
  // 1.0 improves; 1.0 and 1.0 wait out the patience of 2: halve.
  CHECK(plateau->learning_rate_factor(epoch_with(1, 1.0, 1.0)) == 1.0);
  CHECK(plateau->learning_rate_factor(epoch_with(2, 1.0, 1.0)) == 1.0);
  CHECK(plateau->learning_rate_factor(epoch_with(3, 1.0, 1.0)) == 0.5);
  // The cooldown epoch counts down and waits; the next two wait out the
  // patience: min_lr 0.3 stops the rate at 0.3 rather than 0.25.
  CHECK(plateau->learning_rate_factor(epoch_with(4, 1.0, 0.5)) == 1.0);
  CHECK(plateau->learning_rate_factor(epoch_with(5, 1.0, 0.5)) == Approx(0.6));
  // At min_lr it changes nothing; an improvement starts the count over.
  CHECK(plateau->learning_rate_factor(epoch_with(6, 1.0, 0.3)) == 1.0);
  CHECK(plateau->learning_rate_factor(epoch_with(7, 1.0, 0.3)) == 1.0);
  CHECK(plateau->learning_rate_factor(epoch_with(8, 0.5, 0.3)) == 1.0);

  auto bad = troupe::callbacks::reduce_on_plateau("val_loss", 1.5);
  auto refused = bad->check({"loss", "val_loss"});
  REQUIRE_FALSE(refused);
  CHECK_THAT(refused.error().message, Catch::Contains("factor") && Catch::Contains("(0, 1)"));
}

TEST_CASE("a plateau lowers the rate of the epochs after it; the epochs report it, and a "
          "resumed run goes on with it to the same bits",
          "[api][callbacks][plateau][resume]") {
  // min_delta 10: no epoch after the first improves, so with patience 1 the
  // rate is cut after epoch 2 (and after epoch 3, which changes nothing).
  auto cut = [] { return troupe::callbacks::reduce_on_plateau("val_loss", 0.1, 1, 10.0); };
  auto options = quiet_run().epochs(3).set("store-shards", "2");
  options.callbacks.push_back(cut());
  auto reduced = small_mlp().fit(slice().train, slice().test, options);
  REQUIRE(reduced);
  REQUIRE(reduced->epochs.size() == 3);
  CHECK(reduced->epochs[0].learning_rate == Approx(1e-3));
  CHECK(reduced->epochs[1].learning_rate == Approx(1e-3));
  CHECK(reduced->epochs[2].learning_rate == Approx(1e-4));
  CHECK(reduced->epochs[2].metric("learning_rate") == reduced->epochs[2].learning_rate);
  auto plain = small_mlp().fit(slice().train, slice().test, quiet_run().epochs(3));
  REQUIRE(plain);
  CHECK(plain->epochs[2].learning_rate == Approx(1e-3));
  CHECK(plain->params_fnv1a64 != reduced->params_fnv1a64);

  // Two epochs with the cut and a checkpoint, then a resume to three
  // without the callback, on one shard: the factor travels in the file.
  const std::string path = "run_control_test_plateau.ckpt";
  auto first = quiet_run().epochs(2).set("checkpoint", path);
  first.callbacks.push_back(cut());
  REQUIRE(small_mlp().fit(slice().train, slice().test, first));
  auto resumed =
    small_mlp().fit(slice().train, slice().test, quiet_run().epochs(3).set("resume", path));
  std::remove(path.c_str());
  REQUIRE(resumed);
  CHECK(resumed->epochs.back().learning_rate == Approx(1e-4));
  CHECK(resumed->params_fnv1a64 == reduced->params_fnv1a64);
}

TEST_CASE("validation_split validates on the last fraction of the training data, which the "
          "run does not train on",
          "[api][fit][validation_split]") {
  const auto train = troupe::in_memory(slice().train);
  auto split = small_mlp().fit(train, nullptr, quiet_run().validation_split(0.25));
  REQUIRE(split);
  const size_t rows = train->size() * 3 / 4; // floor(n * (1 - 0.25)) for this n
  REQUIRE(rows * 4 == train->size() * 3);
  for (const auto& epoch : split->epochs)
    CHECK(epoch.samples == rows);
  auto tail = split->model.evaluate(train->rows(rows, train->size() - rows));
  REQUIRE(tail);
  CHECK(split->epochs.back().val_loss == Approx(tail->loss).epsilon(1e-9));
  CHECK(split->epochs.back().val_accuracy == tail->accuracy);
  // The same as training on the head alone, validated on the tail.
  const auto head = troupe::in_memory(train->rows(0, rows));
  auto by_hand = small_mlp().fit(head, troupe::in_memory(train->rows(rows, train->size() - rows)),
                                 quiet_run());
  REQUIRE(by_hand);
  CHECK(by_hand->params_fnv1a64 == split->params_fnv1a64);

  auto whole = small_mlp().fit(train, nullptr, quiet_run().validation_split(1.0));
  REQUIRE_FALSE(whole);
  CHECK_THAT(whole.error().message, Catch::Contains("--validation-split=1"));
  auto none = small_mlp().fit(train, nullptr, quiet_run());
  REQUIRE_FALSE(none);
  CHECK_THAT(none.error().message, Catch::Contains("validation source is null"));
}

TEST_CASE("top-k accuracy: top 1 is the accuracy, top 10 of 10 classes every sample; "
          "compiled metrics reach the epochs",
          "[api][fit][metrics]") {
  troupe::sequential model(784, {troupe::layers::dense(32, "relu"),
                                 troupe::layers::dense(10, "softmax")});
  model.compile(troupe::optimizers::adam(), "sparse_categorical_crossentropy",
                {"accuracy", "top_1_accuracy", "sparse_top_k_categorical_accuracy"});
  auto fitted = model.fit(slice().train, slice().test, quiet_run().extra_metrics("top_10_accuracy,top_1_accuracy,sparse_top_k_categorical_accuracy"));
  REQUIRE_FALSE(fitted); // sparse_top_k_categorical_accuracy is compile()'s spelling only
  fitted = model.fit(slice().train, slice().test, quiet_run());
  REQUIRE(fitted);
  for (const auto& epoch : fitted->epochs) {
    CHECK(names(epoch.metrics, "val_top_1_accuracy"));
    CHECK(epoch.metric("val_top_1_accuracy") == Approx(epoch.val_accuracy).margin(0.002));
    CHECK(epoch.metric("val_top_5_accuracy") > epoch.val_accuracy);
    CHECK(epoch.metric("val_top_5_accuracy") <= 1.0);
  }
  auto all = small_mlp().fit(slice().train, slice().test,
                             quiet_run().epochs(1).extra_metrics("top_10_accuracy"));
  REQUIRE(all);
  CHECK(all->epochs[0].metric("val_top_10_accuracy") == 1.0);
  auto too_many = small_mlp().fit(slice().train, slice().test,
                                  quiet_run().extra_metrics("top_11_accuracy"));
  REQUIRE_FALSE(too_many);
  CHECK_THAT(too_many.error().message, Catch::Contains("top_11_accuracy"));
  auto regression_metric = small_mlp().fit(slice().train, slice().test,
                                           quiet_run().extra_metrics("mae"));
  REQUIRE_FALSE(regression_metric);
  CHECK_THAT(regression_metric.error().message, Catch::Contains("class labels"));
}

TEST_CASE("mae and mse of a regression equal those of its predictions",
          "[api][fit][metrics][regression]") {
  const auto train = regression_set(2048, 1);
  const auto test = regression_set(512, 2);
  troupe::sequential model(4, {troupe::layers::dense(16, "relu"), troupe::layers::dense(1)});
  model.compile(troupe::optimizers::adam(0.01f), "mse", {"mae", "mse"});
  auto fitted = model.fit(train, test, quiet_run().epochs(3));
  INFO((fitted ? std::string() : fitted.error().message));
  REQUIRE(fitted);
  auto values = fitted->model.predict(test);
  REQUIRE(values);
  double absolute = 0, squared = 0;
  for (size_t n = 0; n < test.targets.size(); ++n) {
    const double error = double((*values)[n]) - test.targets[n];
    absolute += std::abs(error);
    squared += error * error;
  }
  const double count = static_cast<double>(test.targets.size());
  const auto& last = fitted->epochs.back();
  CHECK(last.metric("val_mae") == Approx(absolute / count).epsilon(1e-9));
  CHECK(last.metric("val_mse") == Approx(squared / count).epsilon(1e-9));
  CHECK(last.metric("val_mse") == Approx(last.val_loss).epsilon(1e-5));
  auto top_k = model.fit(train, test, quiet_run().extra_metrics("top_1_accuracy"));
  REQUIRE_FALSE(top_k);
  CHECK_THAT(top_k.error().message, Catch::Contains("targets"));
}
