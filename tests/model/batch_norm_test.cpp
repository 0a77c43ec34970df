// Batch normalization's two passes and its moving statistics, and the
// optimizer that leaves a model's state to the round's mean
// (tests/api/layers_test.cpp checks its gradient).
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <vector>

#include "model/layers/layer_ops.hpp"
#include "model/layers/layered_model.hpp"
#include "model/optim/averaged_state.hpp"

using namespace troupe;

namespace {

// Per channel of (positions, channels) values: the mean and biased variance, in double.
std::pair<std::vector<double>, std::vector<double>> moments(const std::vector<float>& x,
                                                            size_t channels) {
  const size_t positions = x.size() / channels;
  std::vector<double> mean(channels, 0.0), variance(channels, 0.0);
  for (size_t p = 0; p < positions; ++p)
    for (size_t c = 0; c < channels; ++c)
      mean[c] += x[p * channels + c] / static_cast<double>(positions);
  for (size_t p = 0; p < positions; ++p)
    for (size_t c = 0; c < channels; ++c)
      variance[c] += std::pow(x[p * channels + c] - mean[c], 2) / static_cast<double>(positions);
  return {mean, variance};
}

} // namespace

TEST_CASE("batch normalization trains on the batch's statistics, asks the store to move the "
          "moving ones toward them, and evaluates on the moving ones",
          "[layers][batch_normalization]") {
  const tensor_shape shape{3, 2, 4}; // 6 positions of 4 channels per sample
  auto op = make_batch_normalization(shape);
  REQUIRE(op->parameter_count() == 16);
  REQUIRE(op->state_count() == 8);
  std::vector<float> params(16);
  op->initialize(1, params.data());
  params[8] = 0.5f;  // moving mean of channel 0
  params[13] = 4.0f; // moving variance of channel 1
  std::mt19937 random(3);
  std::normal_distribution<float> draw(2.0f, 3.0f);
  const size_t count = 5;
  std::vector<float> x(count * shape.size()), y(x.size());
  for (float& v : x)
    v = draw(random);
  const auto [mean, variance] = moments(x, 4);
  op->forward(params.data(), x.data(), y.data(), count, pass_keys{0, 0, nullptr, true});
  const auto [out_mean, out_variance] = moments(y, 4);
  for (size_t c = 0; c < 4; ++c) {
    CHECK(out_mean[c] == Approx(0.0).margin(1e-5));
    CHECK(out_variance[c] == Approx(variance[c] / (variance[c] + 1e-3)).epsilon(1e-4));
  }
  std::vector<float> dy(x.size(), 0.0f), dx(x.size()), dparams(16);
  op->backward(params.data(), x.data(), y.data(), dy.data(), dx.data(), dparams.data(), count,
               pass_keys{0, 0, nullptr, true});
  for (size_t c = 0; c < 4; ++c) {
    // Keras: moving = moving * 0.99 + batch * 0.01, asked as current - new.
    CHECK(dparams[8 + c] == Approx(0.01 * (params[8 + c] - mean[c])).epsilon(1e-4));
    CHECK(dparams[12 + c] == Approx(0.01 * (params[12 + c] - variance[c])).epsilon(1e-4));
  }
  op->forward(params.data(), x.data(), y.data(), count, pass_keys{});
  for (size_t i = 0; i < x.size(); ++i) {
    const size_t c = i % 4;
    CHECK(y[i] == Approx((x[i] - params[8 + c]) / std::sqrt(params[12 + c] + 1e-3))
                    .epsilon(1e-5));
  }
}

TEST_CASE("a layered model names batch normalization's moving statistics as its state",
          "[layers][batch_normalization]") {
  auto stack = make_layered_stack("4x4x2-conv3k2-batchnorm-flatten-5-batchnorm-10");
  REQUIRE(stack);
  const auto spans = (*stack)->state_spans();
  REQUIRE(spans.size() == 2);
  // conv: 2*2*2*3 + 3 = 27, then gamma, beta (3 each): state at 33, 6 floats.
  CHECK(spans[0].offset == 33);
  CHECK(spans[0].count == 6);
  // flatten 27 -> dense 5: 27*5 + 5 = 140 from 39; then gamma, beta (5 each).
  CHECK(spans[1].offset == 189);
  CHECK(spans[1].count == 10);
}

TEST_CASE("the store's optimizer moves state by the round's mean change and steps every "
          "other float as it would without state",
          "[optim][batch_normalization]") {
  optimizer_config config; // adam
  auto plain = make_optimizer(config, 6);
  auto with_state = make_optimizer(config, 6);
  REQUIRE(plain);
  REQUIRE(with_state);
  auto averaged = with_averaged_state(std::move(*with_state), {parameter_span{2, 2}});
  std::vector<float> a{0.1f, 0.2f, 1.0f, 2.0f, 0.5f, 0.6f}, b = a;
  // Two replicas ask state [2, 4) to become (0, 4) and (2, 8).
  const std::vector<float> g1{0.3f, -0.1f, 1.0f - 0.0f, 2.0f - 4.0f, 0.2f, 0.0f};
  const std::vector<float> g2{0.1f, 0.4f, 1.0f - 2.0f, 2.0f - 8.0f, -0.2f, 0.5f};
  const std::vector<weighted_gradient> terms{{0.25f, g1.data()}, {0.75f, g2.data()}};
  (*plain)->apply_weighted_sum(a.data(), terms);
  averaged->apply_weighted_sum(b.data(), terms);
  CHECK(b[2] == Approx(0.25 * 0 + 0.75 * 2));
  CHECK(b[3] == Approx(0.25 * 4 + 0.75 * 8));
  for (size_t i : {0, 1, 4, 5})
    CHECK(b[i] == a[i]);
  // One replica: its new value, whatever the learning rate's scale.
  averaged->apply_scaled(b.data(), g1.data(), 0.5f);
  CHECK(b[2] == Approx(1.5f - 1.0f));
  CHECK(averaged->steps() == 2);
  const auto within = spans_within({parameter_span{2, 4}, parameter_span{10, 3}}, 4, 8);
  REQUIRE(within.size() == 2);
  CHECK(within[0].offset == 0);
  CHECK(within[0].count == 2);
  CHECK(within[1].offset == 6);
  CHECK(within[1].count == 2);
}
