// The public API as a program outside the tree uses it: only <troupe/...>
// headers, linked against libtroupe alone.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
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

// A batch of random features and labels for a model's gradient check.
struct random_batch {
  std::vector<float> features;
  std::vector<int32_t> labels;
  troupe::batch view;
};

random_batch make_batch(int inputs, int classes, size_t count) {
  std::mt19937 random(5);
  std::uniform_real_distribution<float> draw(-1.0f, 1.0f);
  random_batch b;
  for (size_t i = 0; i < count * inputs; ++i)
    b.features.push_back(draw(random));
  for (size_t i = 0; i < count; ++i)
    b.labels.push_back(static_cast<int32_t>(random() % classes));
  b.view = troupe::batch{b.features.data(), b.labels.data(), count, inputs};
  return b;
}

// Scales another model's gradient: a wrong gradient the check must catch.
class scaled_gradient final : public troupe::model {
public:
  explicit scaled_gradient(std::unique_ptr<troupe::model> inner) : inner_(std::move(inner)) {}
  int inputs() const override { return inner_->inputs(); }
  int outputs() const override { return inner_->outputs(); }
  size_t parameter_count() const override { return inner_->parameter_count(); }
  void initialize(uint64_t seed, float* p) const override { inner_->initialize(seed, p); }
  troupe::batch_result gradient(const float* p, const troupe::batch& b, float* g) override {
    auto result = inner_->gradient(p, b, g);
    for (size_t i = 0; i < parameter_count(); ++i)
      g[i] *= 1.1f;
    return result;
  }
  troupe::batch_result evaluate(const float* p, const troupe::batch& b) override {
    return inner_->evaluate(p, b);
  }
  void predict(const float* p, const float* x, size_t n, float* out) override {
    inner_->predict(p, x, n, out);
  }

private:
  std::unique_ptr<troupe::model> inner_;
};

} // namespace

TEST_CASE("a sequential stack becomes the built-in description, or says what is wrong",
          "[api][sequential]") {
  CHECK(*small_mlp().description() == "784-32relu-10");
  auto hidden_softmax = troupe::sequential(4, {troupe::layers::dense(3, "softmax"),
                                               troupe::layers::dense(2, "softmax")});
  REQUIRE_FALSE(hidden_softmax.description());
  CHECK_THAT(hidden_softmax.description().error().message,
             Catch::Contains("softmax is built in for the output layer only"));
  auto unknown = troupe::sequential(4, {troupe::layers::dense(3, "swish"),
                                        troupe::layers::dense(2, "softmax")});
  REQUIRE_FALSE(unknown.description());
  CHECK_THAT(unknown.description().error().message,
             Catch::Contains("layer 0 (dense 3, 'swish'): unknown activation"));
  auto tanh_output = troupe::sequential(4, {troupe::layers::dense(2, "tanh")});
  REQUIRE_FALSE(tanh_output.description());
  CHECK_THAT(tanh_output.description().error().message,
             Catch::Contains("the output layer takes softmax"));
  auto mse = small_mlp();
  mse.compile(troupe::optimizers::adam(), "mse");
  auto refused = mse.fit(slice().train, slice().test, quiet_run());
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code == troupe::errc::invalid_argument);
}

TEST_CASE("fit returns a history whose model evaluates, predicts and saves as it trained",
          "[api][fit]") {
  auto model = small_mlp();
  auto options = quiet_run();
  std::vector<uint32_t> seen;
  options.on_epoch = [&seen](const troupe::epoch_result& e) { seen.push_back(e.epoch); };
  auto history = model.fit(slice().train, slice().test, options);
  REQUIRE(history);
  CHECK(seen == std::vector<uint32_t>{1, 2});
  REQUIRE(history->epochs.size() == 2);
  CHECK(history->epochs.back().val_accuracy == history->val_accuracy);
  CHECK(history->steps == 2 * 63); // 2000 samples in rounds of 32
  auto score = model.evaluate(slice().test);
  REQUIRE(score);
  CHECK(score->accuracy == history->val_accuracy);
  CHECK(score->loss == Approx(history->val_loss).epsilon(1e-12));
  auto probabilities = model.predict(slice().test);
  REQUIRE(probabilities);
  int64_t hits = 0;
  for (int n = 0; n < slice().test.count; ++n) {
    const float* row = probabilities->data() + 10 * n;
    CHECK(std::accumulate(row, row + 10, 0.0) == Approx(1.0).epsilon(1e-5));
    hits += std::max_element(row, row + 10) - row == slice().test.labels[n];
  }
  CHECK(static_cast<double>(hits) / slice().test.count == score->accuracy);
  const std::string path = "api_test_model.troupe";
  REQUIRE(model.trained().save(path));
  auto loaded = troupe::load_model(path);
  std::remove(path.c_str());
  REQUIRE(loaded);
  CHECK(loaded->description() == "784-32relu-10");
  CHECK(loaded->parameters() == history->model.parameters());
  CHECK(*loaded->predict(slice().test) == *probabilities);
}

TEST_CASE("options set for a fit win over what the model was compiled with",
          "[api][fit]") {
  auto model = small_mlp();
  auto options = quiet_run().set("model", "784-16relu-10").epochs(1);
  auto history = model.fit(slice().train, slice().test, options);
  REQUIRE(history);
  CHECK(history->model.description() == "784-16relu-10");
  auto bad = model.fit(slice().train, slice().test, quiet_run().set("replicas", "lots"));
  REQUIRE_FALSE(bad);
  CHECK(bad.error().code == troupe::errc::invalid_argument);
  CHECK_THAT(bad.error().message, Catch::Contains("--replicas"));
  auto in_memory = *troupe::make_dataset(slice().train.inputs, slice().train.labels, 784);
  auto nowhere = model.fit(in_memory, slice().test, quiet_run().nodes("127.0.0.1:9"));
  REQUIRE_FALSE(nowhere);
  CHECK_THAT(nowhere.error().message, Catch::Contains("built in memory"));
}

TEST_CASE("a compiled adamw under a cosine warm-up trains with its decay and schedule, the same "
          "bits for any shard count, unless an option says otherwise",
          "[api][fit][optimizer]") {
  auto fitted = [](const troupe::fit_options& options) {
    auto model = small_mlp();
    model.compile(troupe::optimizers::with_schedule(troupe::optimizers::adamw(0.0f, 0.05f),
                                                    troupe::schedules::cosine_decay(100, 0.1f,
                                                                                    20, 0.003f)),
                  "sparse_categorical_crossentropy", {"accuracy"});
    auto history = model.fit(slice().train, slice().test, options);
    REQUIRE(history);
    return history->params_fnv1a64;
  };
  const auto compiled = fitted(quiet_run().set("store-shards", "1"));
  CHECK(fitted(quiet_run().set("store-shards", "2")) == compiled);
  CHECK(fitted(quiet_run().set("weight-decay", "0")) != compiled);
  CHECK(fitted(quiet_run().set("lr", "0.003").set("lr-schedule", "constant")) != compiled);
}

TEST_CASE("a compiled global_clipnorm reaches the run: it clips, the same bits for any shard "
          "count, unless an option says otherwise",
          "[api][fit][optimizer][clipnorm]") {
  auto fitted = [](const troupe::fit_options& options) {
    auto model = small_mlp();
    model.compile(troupe::optimizers::with_global_clipnorm(troupe::optimizers::sgd(0.05f, 0.9f),
                                                           0.5f),
                  "sparse_categorical_crossentropy", {"accuracy"});
    auto history = model.fit(slice().train, slice().test, options);
    REQUIRE(history);
    return history->params_fnv1a64;
  };
  const auto compiled = fitted(quiet_run().set("store-shards", "1"));
  CHECK(fitted(quiet_run().set("store-shards", "3")) == compiled);
  CHECK(fitted(quiet_run().set("global-clipnorm", "0")) != compiled);
  // Delayed closes rounds as sync does, and may queue one step behind another.
  const auto delayed = [&fitted](const char* shards) {
    return fitted(
      quiet_run().mode("delayed").set("staleness", "2").set("store-shards", shards));
  };
  CHECK(delayed("3") == delayed("1"));
}

TEST_CASE("check_gradient passes every built-in layer and catches a wrong gradient",
          "[api][gradient]") {
  // A dense layer with relu, one without (linear), and the softmax output.
  for (const char* description : {"12-5", "12-7relu-5", "12-7relu-6relu-5"}) {
    INFO(description);
    auto model = troupe::make_model(description);
    REQUIRE(model);
    auto b = make_batch(12, 5, 6);
    auto report = troupe::check_gradient(**model, b.view);
    REQUIRE(report);
    CHECK(report->checked == (*model)->parameter_count());
    INFO("worst: parameter " << report->worst_index << ", analytic " << report->worst_analytic
                             << ", numeric " << report->worst_numeric);
    CHECK(report->passed);
  }
  scaled_gradient wrong(std::move(*troupe::make_model("12-7relu-5")));
  auto b = make_batch(12, 5, 6);
  auto report = troupe::check_gradient(wrong, b.view);
  REQUIRE(report);
  CHECK_FALSE(report->passed);
  CHECK(report->worst_excess > 1.0);
}

TEST_CASE("make_dataset checks arrays from memory", "[api][data]") {
  CHECK(troupe::make_dataset({1, 2, 3, 4}, {0, 1}, 2));
  CHECK(troupe::make_dataset({1, 2, 3, 4}, {0, 1}, 2)->classes == 2);
  auto ragged = troupe::make_dataset({1, 2, 3}, {0, 1}, 2);
  REQUIRE_FALSE(ragged);
  CHECK_THAT(ragged.error().message, Catch::Contains("labels x width"));
  auto not_finite = troupe::make_dataset({1, NAN, 3, 4}, {0, 1}, 2);
  REQUIRE_FALSE(not_finite);
  CHECK_THAT(not_finite.error().message, Catch::Contains("sample 0"));
  auto out_of_range = troupe::make_dataset({1, 2, 3, 4}, {0, 3}, 2, 2);
  REQUIRE_FALSE(out_of_range);
  CHECK_THAT(out_of_range.error().message, Catch::Contains("outside [0, 2)"));
}

TEST_CASE("a sequential model with a linear output trains on float targets with mse, "
          "to the same bits whatever the shard count",
          "[api][fit][regression]") {
  const auto train = regression_set(2048, 1);
  const auto test = regression_set(512, 2);
  double variance = 0;
  for (float t : test.targets)
    variance += double(t) * t / test.count;
  troupe::sequential model(4, {troupe::layers::dense(32, "relu"),
                               troupe::layers::dense(1, "linear")});
  model.compile(troupe::optimizers::adam(0.01f), "mse", {});
  CHECK(*model.description() == "4-32relu-1:mse");
  auto options = troupe::fit_options().epochs(5).replicas(2).seed(3).quiet();
  auto one_shard = model.fit(train, test, troupe::fit_options(options).set("store-shards", "1"));
  REQUIRE(one_shard);
  auto two_shards = model.fit(train, test, troupe::fit_options(options).set("store-shards", "2"));
  REQUIRE(two_shards);
  CHECK(two_shards->params_fnv1a64 == one_shard->params_fnv1a64);
  INFO("val_loss " << two_shards->val_loss << ", target variance " << variance);
  CHECK(two_shards->val_loss < 0.1 * variance);
  CHECK(two_shards->epochs.back().val_loss < two_shards->epochs.front().val_loss);
  auto values = model.predict(test);
  REQUIRE(values);
  REQUIRE(values->size() == static_cast<size_t>(test.count));
  double squared = 0;
  for (int n = 0; n < test.count; ++n)
    squared += double((*values)[n] - test.targets[n]) * ((*values)[n] - test.targets[n]);
  CHECK(squared / test.count == Approx(two_shards->val_loss).epsilon(1e-4));
  auto labels_with_mse = model.fit(slice().train, slice().test, options);
  REQUIRE_FALSE(labels_with_mse);
  CHECK_THAT(labels_with_mse.error().message, Catch::Contains("float targets"));
}

TEST_CASE("check_gradient passes the squared-error output", "[api][gradient][regression]") {
  auto model = troupe::make_model("6-5relu-2:mse");
  REQUIRE(model);
  auto b = make_batch(6, 2, 5);
  std::vector<float> targets(10);
  for (size_t i = 0; i < targets.size(); ++i)
    targets[i] = 0.3f * static_cast<float>(i) - 1.0f;
  b.view.targets = targets.data();
  b.view.labels = nullptr;
  auto report = troupe::check_gradient(**model, b.view);
  REQUIRE(report);
  CHECK(report->checked == (*model)->parameter_count());
  CHECK(report->passed);
}
