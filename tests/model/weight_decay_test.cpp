// Keras 3's decoupled weight decay on AdamW, Adam and SGD: closed forms over
// several steps, and zero decay leaving the old bits alone.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <vector>

#include "model/optim/optimizer.hpp"
#include "tests/model/optimizer_reference.hpp"

using namespace troupe;

TEST_CASE("adamw decays each weight by lr x weight decay, then takes adam's step, step after "
          "step",
          "[model][optim][adamw][weight-decay]") {
  const auto config = optimizers::adamw(0.05f, 0.1f);
  test::check_against_reference(config, [&](int) { return double{config.learning_rate}; }, 8);
}

TEST_CASE("sgd with weight decay decays before its step, with and without (Nesterov) "
          "momentum",
          "[model][optim][sgd][weight-decay]") {
  for (const auto& config : {optimizers::sgd(0.05f, 0.0f, false, 0.2f),
                             optimizers::sgd(0.05f, 0.9f, false, 0.2f),
                             optimizers::sgd(0.05f, 0.9f, true, 0.2f)}) {
    INFO("momentum " << config.momentum << ", nesterov " << config.nesterov);
    test::check_against_reference(config, [&](int) { return double{config.learning_rate}; }, 8);
  }
}

TEST_CASE("with no gradient, weight decay shrinks every weight by 1 - lr x weight decay per "
          "step",
          "[model][optim][weight-decay]") {
  // Adam's step on a zero gradient is 0 / (0 + epsilon): only the decay moves.
  for (const auto& config : {optimizers::adamw(0.1f, 0.05f),
                             optimizers::sgd(0.1f, 0.9f, false, 0.05f),
                             optimizers::rmsprop(0.1f, 0.9f, 0.0f, 1e-7f, false, 0.05f)}) {
    INFO(config.name);
    auto optim = make_optimizer(config, 2);
    REQUIRE(optim);
    std::vector<float> w{2.0f, -0.5f};
    const std::vector<float> zero(2, 0.0f);
    const int steps = 20;
    for (int t = 0; t < steps; ++t)
      (*optim)->apply(w.data(), zero.data());
    const double factor = std::pow(1.0 - 0.1 * 0.05, steps);
    // 20 roundings of a float near 1: within 1e-6 relative.
    CHECK(w[0] == Approx(2.0 * factor).epsilon(1e-6));
    CHECK(w[1] == Approx(-0.5 * factor).epsilon(1e-6));
  }
}

TEST_CASE("adam with weight decay is adamw, and without it adamw steps adam's bits",
          "[model][optim][adamw][weight-decay]") {
  for (float decay : {0.0f, 0.01f}) {
    INFO("weight decay " << decay);
    auto adam_config = optimizers::adam(0.01f);
    adam_config.weight_decay = decay;
    auto with_adam = make_optimizer(adam_config, 300);
    auto with_adamw = make_optimizer(optimizers::adamw(0.01f, decay), 300);
    REQUIRE(with_adam);
    REQUIRE(with_adamw);
    std::vector<float> a(300), b(300), g(300);
    for (size_t i = 0; i < a.size(); ++i)
      a[i] = b[i] = std::cos(0.1f * static_cast<float>(i));
    for (int step = 0; step < 4; ++step) {
      for (size_t i = 0; i < g.size(); ++i)
        g[i] = std::sin(0.3f * static_cast<float>(i) + static_cast<float>(step));
      (*with_adam)->apply(a.data(), g.data());
      (*with_adamw)->apply(b.data(), g.data());
    }
    CHECK(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
  }
}

TEST_CASE("an adamw step whose skip flag is set does not decay the weights either",
          "[model][optim][adamw][weight-decay]") {
  auto optim = make_optimizer(optimizers::adamw(0.1f, 0.5f), 2);
  REQUIRE(optim);
  std::vector<float> w{1.0f, -1.0f};
  const std::vector<float> g{0.5f, 0.5f};
  float flag = 1.0f;
  REQUIRE((*optim)->skip_next_step_if(&flag));
  (*optim)->apply(w.data(), g.data());
  CHECK(w == std::vector<float>{1.0f, -1.0f});
}

TEST_CASE("weight decay steps on the host only, and a negative one is refused naming "
          "--weight-decay",
          "[model][optim][weight-decay]") {
  auto config = optimizers::adamw();
  CHECK_FALSE(steps_on_device(config));
  config.weight_decay = 0.0f;
  config.name = "adam";
  CHECK(steps_on_device(config));
  config.weight_decay = -0.1f;
  auto negative = make_optimizer(config, 1);
  REQUIRE_FALSE(negative);
  CHECK(negative.error().message == "--weight-decay must be 0 or more, got -0.1");
}
