// fit_options::class_weights (Keras's class_weight) through the public API:
// a starved class weighed up is recalled more, validation is not weighted,
// and bad weights are refused naming --class-weights.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <troupe/troupe.hpp>

#include "api_fixture.hpp"

namespace {

using api_fixture::slice;
using api_fixture::small_mlp;

constexpr int starved = 3; // Fashion-MNIST's dresses

// The training slice with only the first `kept` samples of class `starved`.
troupe::dataset imbalanced(int kept) {
  const auto& train = slice().train;
  std::vector<float> features;
  std::vector<int32_t> labels;
  int seen = 0;
  for (int i = 0; i < train.count; ++i) {
    if (train.labels[i] == starved && seen++ >= kept)
      continue;
    const auto row = train.inputs.begin() + static_cast<size_t>(i) * train.features;
    features.insert(features.end(), row, row + train.features);
    labels.push_back(train.labels[i]);
  }
  return *troupe::make_dataset(std::move(features), std::move(labels), train.features, 10);
}

// The share of the test samples of class `cls` that `model` predicts as it.
double recall(const troupe::trained_model& model, int cls) {
  const auto& test = slice().test;
  auto outputs = model.predict(test);
  REQUIRE(outputs);
  int of_class = 0, found = 0;
  for (int i = 0; i < test.count; ++i) {
    if (test.labels[i] != cls)
      continue;
    const float* row = outputs->data() + static_cast<size_t>(i) * 10;
    ++of_class;
    found += std::max_element(row, row + 10) - row == cls ? 1 : 0;
  }
  REQUIRE(of_class > 0);
  return static_cast<double>(found) / of_class;
}

// A registered model that does not say it honours sample weights.
class unweighted_model final : public troupe::model {
public:
  unweighted_model() : inner_(std::move(*troupe::make_model("784-10"))) {}
  int inputs() const override { return inner_->inputs(); }
  int outputs() const override { return inner_->outputs(); }
  size_t parameter_count() const override { return inner_->parameter_count(); }
  void initialize(uint64_t seed, float* p) const override { inner_->initialize(seed, p); }
  troupe::batch_result gradient(const float* p, const troupe::batch& b, float* g) override {
    return inner_->gradient(p, b, g);
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

TEST_CASE("a starved class weighed up is recalled more, and validation is not weighted",
          "[api][fit][class-weights]") {
  const auto train = imbalanced(8);
  auto model = small_mlp();
  const auto options = troupe::fit_options().epochs(3).replicas(2).seed(11).quiet();
  auto plain = model.fit(train, slice().test, options);
  REQUIRE(plain);
  auto weighted =
    model.fit(train, slice().test, troupe::fit_options(options).class_weights({{starved, 40.0f}}));
  REQUIRE(weighted);
  CHECK(weighted->params_fnv1a64 != plain->params_fnv1a64);
  const double plain_recall = recall(plain->model, starved);
  const double weighted_recall = recall(weighted->model, starved);
  INFO("recall of class " << starved << ": " << plain_recall << " without weights, "
                          << weighted_recall << " with");
  CHECK(weighted_recall > plain_recall + 0.1);
  // The validation figures are the unweighted mean loss over the test set.
  auto evaluated = weighted->model.evaluate(slice().test);
  REQUIRE(evaluated);
  CHECK(weighted->val_loss == Approx(evaluated->loss).epsilon(1e-6));
  // Every weight 1, given as a vector: the bits of no weights.
  auto ones = model.fit(train, slice().test,
                        troupe::fit_options(options).class_weights(std::vector<float>(10, 1.0f)));
  REQUIRE(ones);
  CHECK(ones->params_fnv1a64 == plain->params_fnv1a64);
  CHECK(ones->epochs.back().loss == plain->epochs.back().loss);
}

TEST_CASE("bad class weights are refused naming --class-weights", "[api][fit][class-weights]") {
  auto model = small_mlp();
  const auto options = troupe::fit_options().epochs(1).replicas(1).quiet();
  const std::vector<std::pair<troupe::fit_options, std::string>> refused{
    {troupe::fit_options(options).class_weights({{2, -1.0f}}), "gives a negative weight"},
    {troupe::fit_options(options).class_weights({{2, std::nanf("")}}), "not finite"},
    {troupe::fit_options(options).class_weights({{10, 2.0f}}), "class 10 is out of range"},
    {troupe::fit_options(options).class_weights(std::vector<float>(10, 0.0f)),
     "every class weighs 0"},
    {troupe::fit_options(options).class_weights({{1, 2.0f}}).set("devices", "cuda:0"),
     "cpu replicas only"},
  };
  for (const auto& [bad, says] : refused) {
    auto history = model.fit(slice().train, slice().test, bad);
    REQUIRE_FALSE(history);
    INFO(history.error().message);
    CHECK(history.error().code == troupe::errc::invalid_argument);
    CHECK_THAT(history.error().message, Catch::Contains("--class-weights")
                                          && Catch::Contains(says));
  }
  // A regression set has no classes to weigh.
  auto regression = troupe::make_regression_dataset(std::vector<float>(64 * 4, 0.5f),
                                                    std::vector<float>(64, 1.0f), 4, 1);
  REQUIRE(regression);
  troupe::sequential regressor(4, {troupe::layers::dense(1, "linear")});
  regressor.compile(troupe::optimizers::adam(), "mse", {});
  auto regressed = regressor.fit(*regression, *regression,
                                 troupe::fit_options(options).class_weights({{0, 2.0f}}));
  REQUIRE_FALSE(regressed);
  CHECK_THAT(regressed.error().message,
             Catch::Contains("--class-weights") && Catch::Contains("regression set"));
  troupe::register_model("unweighted_784", [](const std::string&) {
    return troupe::expected<std::unique_ptr<troupe::model>>(std::make_unique<unweighted_model>());
  });
  auto unweighted = troupe::fit("unweighted_784", troupe::optimizers::adam(), slice().train,
                                slice().test, troupe::fit_options(options).class_weights({{1, 2.0f}}));
  REQUIRE_FALSE(unweighted);
  CHECK_THAT(unweighted.error().message,
             Catch::Contains("--class-weights: model unweighted_784 does not say it honours"));
}
