// check_gradient as a user of a model of their own meets it: a batch that
// does not fit is an error, and the default tolerance catches a penalty
// left out of the gradient.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include <troupe/troupe.hpp>

namespace {

// Softmax regression with an L2 penalty lambda/2 * |w|^2 in its loss, in
// float as a user would write it; `forget_penalty` leaves the penalty's
// lambda * w out of the gradient.
class penalized_softmax final : public troupe::model {
public:
  penalized_softmax(int inputs, int outputs, float lambda, bool forget_penalty)
    : inputs_(inputs), outputs_(outputs), lambda_(lambda), forget_(forget_penalty) {}

  int inputs() const override { return inputs_; }
  int outputs() const override { return outputs_; }
  size_t parameter_count() const override {
    return static_cast<size_t>(inputs_ + 1) * static_cast<size_t>(outputs_);
  }
  void initialize(uint64_t seed, float* p) const override {
    std::mt19937 random(static_cast<uint32_t>(seed));
    const float limit = std::sqrt(6.0f / static_cast<float>(inputs_ + outputs_));
    std::uniform_real_distribution<float> draw(-limit, limit);
    for (size_t i = 0; i < parameter_count(); ++i)
      p[i] = i < weights() ? draw(random) : 0.0f;
  }
  troupe::batch_result gradient(const float* p, const troupe::batch& b, float* g) override {
    return run(p, b, g);
  }
  troupe::batch_result evaluate(const float* p, const troupe::batch& b) override {
    return run(p, b, nullptr);
  }
  void predict(const float*, const float*, size_t, float*) override {}

private:
  size_t weights() const { return static_cast<size_t>(inputs_) * static_cast<size_t>(outputs_); }

  troupe::batch_result run(const float* p, const troupe::batch& b, float* g) {
    troupe::batch_result result;
    if (g != nullptr)
      std::fill(g, g + parameter_count(), 0.0f);
    std::vector<float> z(static_cast<size_t>(outputs_));
    for (size_t n = 0; n < b.count; ++n) {
      for (int k = 0; k < outputs_; ++k) {
        float sum = p[weights() + static_cast<size_t>(k)];
        for (int i = 0; i < inputs_; ++i)
          sum += p[static_cast<size_t>(k * inputs_ + i)] * b.row(n)[i];
        z[static_cast<size_t>(k)] = sum;
      }
      const float top = *std::max_element(z.begin(), z.end());
      float total = 0;
      for (float v : z)
        total += std::exp(v - top);
      const int label = b.labels[n];
      result.loss_sum -= z[static_cast<size_t>(label)] - top - std::log(total);
      if (g == nullptr)
        continue;
      for (int k = 0; k < outputs_; ++k) {
        const float d = (std::exp(z[static_cast<size_t>(k)] - top) / total - (k == label))
                        / static_cast<float>(b.count);
        for (int i = 0; i < inputs_; ++i)
          g[k * inputs_ + i] += d * b.row(n)[i];
        g[weights() + static_cast<size_t>(k)] += d;
      }
    }
    double penalty = 0;
    for (size_t i = 0; i < weights(); ++i)
      penalty += 0.5 * lambda_ * p[i] * p[i];
    result.loss_sum += penalty * static_cast<double>(b.count); // the mean loss carries it once
    if (g != nullptr && !forget_)
      for (size_t i = 0; i < weights(); ++i)
        g[i] += lambda_ * p[i];
    return result;
  }

  int inputs_;
  int outputs_;
  float lambda_;
  bool forget_;
};

struct random_batch {
  std::vector<float> features;
  std::vector<int32_t> labels;
  troupe::batch view;
};

random_batch make_batch(int inputs, int classes, size_t count) {
  std::mt19937 random(5);
  std::uniform_real_distribution<float> draw(-1.0f, 1.0f);
  random_batch b;
  for (size_t i = 0; i < count * static_cast<size_t>(inputs); ++i)
    b.features.push_back(draw(random));
  for (size_t i = 0; i < count; ++i)
    b.labels.push_back(static_cast<int32_t>(random() % static_cast<uint32_t>(classes)));
  b.view = troupe::batch{b.features.data(), b.labels.data(), count, inputs};
  return b;
}

} // namespace

TEST_CASE("check_gradient's default tolerance catches an L2 penalty of 1e-3 left out of the "
          "gradient",
          "[api][gradient]") {
  auto b = make_batch(8, 3, 16);
  penalized_softmax right(8, 3, 1e-3f, false);
  auto passed = troupe::check_gradient(right, b.view);
  REQUIRE(passed);
  INFO("worst excess " << passed->worst_excess);
  CHECK(passed->passed);
  penalized_softmax forgot(8, 3, 1e-3f, true);
  auto failed = troupe::check_gradient(forgot, b.view);
  REQUIRE(failed);
  INFO("worst excess " << failed->worst_excess);
  CHECK_FALSE(failed->passed);
}

TEST_CASE("check_gradient refuses a batch that does not fit the model", "[api][gradient]") {
  penalized_softmax model(8, 3, 0.0f, false);
  auto wide = make_batch(9, 3, 4);
  auto width = troupe::check_gradient(model, wide.view);
  REQUIRE_FALSE(width);
  CHECK_THAT(width.error().message, Catch::Contains("the model takes 8"));
  auto b = make_batch(8, 3, 4);
  b.labels[2] = 3;
  auto label = troupe::check_gradient(model, b.view);
  REQUIRE_FALSE(label);
  CHECK(label.error().code == troupe::errc::invalid_argument);
  CHECK_THAT(label.error().message, Catch::Contains("sample 2 has label 3"));
  CHECK_THAT(label.error().message, Catch::Contains("labels 0..2"));
}
