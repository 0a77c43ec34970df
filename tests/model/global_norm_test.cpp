// Clipping by global norm (Keras's global_clipnorm): closed forms of SGD and
// Adam steps with the clip active and not, the exact sum of squares that
// keeps its bits however the gradient is split, and the option's checks.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "model/optim/global_norm.hpp"
#include "model/optim/optimizer.hpp"
#include "tests/model/optimizer_reference.hpp"

using namespace troupe;

namespace {

// Steps `config`'s optimizer over `gradients` (each clipped first, as the
// store does) from `w`, and returns the weights.
std::vector<float> clipped_steps(const optimizer_config& config, std::vector<float> w,
                                 const std::vector<std::vector<float>>& gradients) {
  auto optim = make_optimizer(config, w.size());
  REQUIRE(optim);
  for (auto g : gradients) {
    clip_by_global_norm(g.data(), g.size(), config.global_clipnorm);
    (*optim)->apply(w.data(), g.data());
  }
  return w;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

} // namespace

TEST_CASE("sgd with global_clipnorm steps with g x clipnorm / max(norm, clipnorm)",
          "[model][optim][clipnorm]") {
  // g = (3, 4): norm 5. Clipped at 1 it is (0.6, 0.8); at 10 it stays.
  const std::vector<std::vector<float>> gradients(3, std::vector<float>{3.0f, 4.0f});
  const auto clipped = clipped_steps(optimizers::with_global_clipnorm(optimizers::sgd(0.1f), 1),
                                     {1.0f, 1.0f}, gradients);
  CHECK(clipped[0] == Approx(1.0 - 3 * 0.1 * 0.6).epsilon(1e-6));
  CHECK(clipped[1] == Approx(1.0 - 3 * 0.1 * 0.8).epsilon(1e-6));
  const auto inactive = clipped_steps(
    optimizers::with_global_clipnorm(optimizers::sgd(0.1f), 10), {1.0f, 1.0f}, gradients);
  CHECK(inactive[0] == Approx(1.0 - 3 * 0.1 * 3).epsilon(1e-6));
  CHECK(inactive[1] == Approx(1.0 - 3 * 0.1 * 4).epsilon(1e-6));
  // Inactive, the clip leaves the bits of a run without it.
  CHECK(same_bits(inactive, clipped_steps(optimizers::sgd(0.1f), {1.0f, 1.0f}, gradients)));
  // A norm equal to clipnorm is not clipped either: the factor is exactly 1.
  CHECK(global_clip_scale(5.0, 5.0f) == 1.0f);
  CHECK(global_clip_scale(5.0, 0.0f) == 1.0f);
  CHECK(global_clip_scale(8.0, 2.0f) == 0.25f);
}

TEST_CASE("adam with global_clipnorm follows Keras's rule on the clipped gradients, active "
          "in one step and not in the next",
          "[model][optim][clipnorm]") {
  // Step 1: (3, 4), norm 5, clipped at 1 to (0.6, 0.8). Step 2: (0.3, -0.4),
  // norm 0.5, not clipped. Step 3: (-6, 8), norm 10, clipped to (-0.6, 0.8).
  const std::vector<std::vector<float>> gradients{{3.0f, 4.0f}, {0.3f, -0.4f}, {-6.0f, 8.0f}};
  const std::vector<std::vector<double>> applied{{0.6, 0.8}, {0.3, -0.4}, {-0.6, 0.8}};
  const auto config = optimizers::with_global_clipnorm(optimizers::adam(0.01f), 1.0f);
  const auto w = clipped_steps(config, {0.5f, -0.25f}, gradients);
  for (size_t i = 0; i < 2; ++i) {
    test::reference_weight reference(config, i == 0 ? 0.5 : -0.25);
    for (const auto& g : applied)
      reference.step(g[i], config.learning_rate);
    INFO("weight " << i);
    CHECK(w[i] == Approx(reference.value()).epsilon(1e-6));
  }
  // Unclipped, Adam's second step weighs the first gradient 10 times more.
  CHECK_FALSE(same_bits(w, clipped_steps(optimizers::adam(0.01f), {0.5f, -0.25f}, gradients)));
}

TEST_CASE("the sum of squares has the same bits however the gradient is split on blocks and "
          "in whatever order the parts are added",
          "[model][optim][clipnorm][bits]") {
  std::mt19937 random(7);
  std::uniform_real_distribution<float> mantissa(-1.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(-60, 30); // a wide range: roundings differ
  std::vector<float> g(1013); // a last block that is not full
  for (auto& x : g)
    x = std::ldexp(mantissa(random), exponent(random));
  const square_sum whole = sum_of_squares(g.data(), g.size());
  double reference = 0;
  for (float x : g)
    reference += static_cast<double>(x) * x;
  CHECK(whole.total() == Approx(reference).epsilon(1e-12));
  for (size_t parts : {2u, 3u, 5u, 17u}) {
    std::vector<square_sum> sums;
    for (size_t k = 0; k < parts; ++k) { // cut as split_into_shards cuts: on blocks
      const size_t begin = k * g.size() / parts / norm_block * norm_block;
      const size_t end = k + 1 == parts ? g.size() : (k + 1) * g.size() / parts / norm_block
                                                       * norm_block;
      sums.push_back(sum_of_squares(g.data() + begin, end - begin));
    }
    square_sum forward, backward;
    for (size_t k = 0; k < parts; ++k) {
      forward.add(sums[k]);
      backward.add(sums[parts - 1 - k]);
    }
    INFO(parts << " parts");
    CHECK(forward.limbs == backward.limbs);
    const double a = forward.total(), b = backward.total(), c = whole.total();
    CHECK(std::memcmp(&a, &c, sizeof a) == 0);
    CHECK(std::memcmp(&b, &c, sizeof b) == 0);
  }
  // The extremes of float: the smallest subnormal and the largest finite value.
  const std::vector<float> extremes{std::numeric_limits<float>::denorm_min(),
                                    std::numeric_limits<float>::max()};
  CHECK(sum_of_squares(extremes.data(), 1).total() == std::ldexp(1.0, -298));
  CHECK(sum_of_squares(extremes.data() + 1, 1).total()
        == static_cast<double>(extremes[1]) * extremes[1]);
  const std::vector<float> bad{1.0f, INFINITY};
  CHECK(std::isinf(sum_of_squares(bad.data(), bad.size()).norm()));
}

TEST_CASE("a negative global_clipnorm is refused with a sentence naming the option, and "
          "clipping steps on the host only",
          "[model][optim][clipnorm]") {
  auto config = optimizers::adam();
  config.global_clipnorm = -1.0f;
  CHECK(refuse_optimizer_config(config).find("--global-clipnorm") != std::string::npos);
  CHECK_FALSE(make_optimizer(config, 4));
  config.global_clipnorm = 1.0f;
  CHECK(refuse_optimizer_config(config).empty());
  CHECK_FALSE(steps_on_device(config));
  CHECK(steps_on_device(optimizers::adam()));
}
