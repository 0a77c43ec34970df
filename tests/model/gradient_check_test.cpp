// Finite-difference checks of the loss, each dense layer and the whole network.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "model/backend/cpu/eigen_backend.hpp"
#include "model/finite_check.hpp"
#include "model/network.hpp"
#include "model/random.hpp"

using namespace troupe;

namespace {

struct toy_batch {
  std::vector<float> inputs;
  std::vector<int32_t> labels;
};

toy_batch make_batch(const model_spec& spec, size_t batch, uint64_t seed) {
  random_stream random(seed);
  toy_batch result;
  for (size_t i = 0; i < batch * spec.inputs; ++i)
    result.inputs.push_back(2.0f * random.unit_float() - 1.0f);
  for (size_t i = 0; i < batch; ++i)
    result.labels.push_back(static_cast<int32_t>(random.below(spec.classes())));
  return result;
}

double mean_loss(network& net, const std::vector<float>& params, const toy_batch& b) {
  net.use_parameters(params.data());
  return net.evaluate(b.inputs.data(), b.labels.data(), b.labels.size()).mean_loss();
}

// Compares every analytic gradient entry with a central difference.
void check_gradient(const std::string& spec_text, size_t batch) {
  auto spec = parse_model_spec(spec_text);
  REQUIRE(spec);
  auto compute = make_eigen_backend();
  network net(*spec, *compute, batch);
  auto params = glorot_uniform_parameters(net.layout(), 7);
  random_stream random(11);
  for (auto& p : params) // non-zero biases too, so every path is exercised
    p += 0.1f * (random.unit_float() - 0.5f);
  auto b = make_batch(*spec, batch, 3);
  std::vector<float> gradient(params.size());
  net.use_parameters(params.data());
  net.compute_gradient(b.inputs.data(), b.labels.data(), batch, gradient.data());

  const float step = 1e-2f;
  size_t checked = 0;
  for (size_t i = 0; i < params.size(); ++i) {
    const float saved = params[i];
    params[i] = saved + step;
    const double up = mean_loss(net, params, b);
    params[i] = saved - step;
    const double down = mean_loss(net, params, b);
    params[i] = saved;
    const double numeric = (up - down) / (2.0 * step);
    INFO(spec_text << ": parameter " << i << " analytic " << gradient[i]
                   << " numeric " << numeric);
    REQUIRE(std::abs(gradient[i] - numeric) <= 2e-3 + 2e-2 * std::abs(numeric));
    ++checked;
  }
  CHECK(checked == params.size());
}

} // namespace

TEST_CASE("softmax cross-entropy gradient matches finite differences of the loss",
          "[model][gradient][loss]") {
  auto compute = make_eigen_backend();
  const int rows = 3, classes = 5;
  random_stream random(5);
  std::vector<float> logits(rows * classes);
  for (auto& z : logits)
    z = 4.0f * random.unit_float() - 2.0f;
  std::vector<int32_t> labels{0, 3, 4};
  std::vector<float> dlogits(logits.size());
  float stats[2] = {0, 0};
  compute->softmax_cross_entropy(logits.data(), labels.data(), rows, classes,
                                 1.0f / rows, dlogits.data(), stats);
  auto loss = [&](const std::vector<float>& z) {
    float s[2] = {0, 0};
    compute->softmax_cross_entropy(z.data(), labels.data(), rows, classes, 0.0f,
                                   nullptr, s);
    return static_cast<double>(s[0]) / rows;
  };
  for (size_t i = 0; i < logits.size(); ++i) {
    auto up = logits, down = logits;
    up[i] += 1e-2f;
    down[i] -= 1e-2f;
    const double numeric = (loss(up) - loss(down)) / 2e-2;
    INFO("logit " << i);
    REQUIRE(dlogits[i] == Approx(numeric).margin(1e-4).epsilon(1e-2));
  }
}

TEST_CASE("cross-entropy from logits stays finite for huge logits",
          "[model][loss]") {
  auto compute = make_eigen_backend();
  std::vector<float> logits{1000.0f, -1000.0f, 0.0f};
  std::vector<int32_t> labels{1};
  std::vector<float> dlogits(3);
  float stats[2] = {0, 0};
  compute->softmax_cross_entropy(logits.data(), labels.data(), 1, 3, 1.0f,
                                 dlogits.data(), stats);
  CHECK(stats[0] == Approx(2000.0f)); // logsumexp = 1000, minus z[1] = -1000
  CHECK(stats[1] == 0.0f);
  CHECK(dlogits[0] == Approx(1.0f));
  CHECK(dlogits[1] == Approx(-1.0f));
}

TEST_CASE("a single dense layer's gradient matches finite differences",
          "[model][gradient][dense]") {
  check_gradient("6-4", 5);
}

TEST_CASE("dense relu layers' gradients match finite differences",
          "[model][gradient][relu]") {
  check_gradient("7-6relu-5relu-3", 4);
}

TEST_CASE("a batch of zero samples gives a zero gradient", "[model][network]") {
  auto spec = parse_model_spec("4-3relu-2");
  REQUIRE(spec);
  auto compute = make_eigen_backend();
  network net(*spec, *compute, 8);
  auto params = glorot_uniform_parameters(net.layout(), 1);
  std::vector<float> gradient(params.size(), 42.0f);
  net.use_parameters(params.data());
  auto stats = net.compute_gradient(nullptr, nullptr, 0, gradient.data());
  CHECK(stats.samples == 0);
  for (float g : gradient)
    REQUIRE(g == 0.0f);
}

TEST_CASE("evaluation over more samples than the batch buffer chunks correctly",
          "[model][network]") {
  auto spec = parse_model_spec("5-4relu-3");
  REQUIRE(spec);
  auto compute = make_eigen_backend();
  auto b = make_batch(*spec, 23, 9);
  network small(*spec, *compute, 4);
  network large(*spec, *compute, 23);
  auto params = glorot_uniform_parameters(small.layout(), 2);
  small.use_parameters(params.data());
  large.use_parameters(params.data());
  auto chunked = small.evaluate(b.inputs.data(), b.labels.data(), 23);
  auto whole = large.evaluate(b.inputs.data(), b.labels.data(), 23);
  CHECK(chunked.samples == 23);
  CHECK(chunked.correct == whole.correct);
  CHECK(chunked.loss_sum == Approx(whole.loss_sum).epsilon(1e-5));
}

TEST_CASE("a gradient proven finite holds only finite floats, and an overflowing one is not "
          "proven",
          "[model][network][finite]") {
  auto spec = parse_model_spec("7-6relu-5relu-3");
  REQUIRE(spec);
  auto compute = make_eigen_backend();
  const size_t batch = 4;
  network net(*spec, *compute, batch);
  const auto initial = glorot_uniform_parameters(net.layout(), 7);
  auto b = make_batch(*spec, batch, 3);
  std::vector<float> gradient(initial.size());
  // Scaling every parameter by s scales the layers' outputs by up to s^3:
  // from ordinary values to activations and logits that overflow.
  size_t proven = 0, unproven_non_finite = 0;
  for (float scale : {1.0f, 10.0f, 1e4f, 1e8f, 1e11f, 1e12f, 1e13f, 1e14f, 1e20f}) {
    auto params = initial;
    for (auto& p : params)
      p *= scale;
    net.use_parameters(params.data());
    net.compute_gradient(b.inputs.data(), b.labels.data(), batch, gradient.data());
    const bool non_finite = has_non_finite(gradient.data(), gradient.size());
    INFO("parameters scaled by " << scale);
    if (net.last_gradient_proven_finite()) {
      CHECK_FALSE(non_finite); // the proof is never wrong
      ++proven;
    } else if (non_finite) {
      ++unproven_non_finite;
    }
    if (scale == 1.0f)
      CHECK(net.last_gradient_proven_finite()); // ordinary training is proven
  }
  CHECK(proven >= 3);
  CHECK(unproven_non_finite >= 1); // overflow happened, and was not proven away
  net.use_parameters(initial.data());
  net.compute_gradient(nullptr, nullptr, 0, gradient.data());
  CHECK(net.last_gradient_proven_finite()); // zeros
}
