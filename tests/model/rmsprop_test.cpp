// RMSprop against Keras 3's rule (epsilon inside the root) over several
// steps, its state planes, and its refused settings.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "model/optim/optimizer.hpp"
#include "tests/model/optimizer_reference.hpp"

using namespace troupe;

TEST_CASE("rmsprop follows Keras's rule step after step, plain, with momentum, centered and "
          "with weight decay",
          "[model][optim][rmsprop]") {
  for (bool centered : {false, true})
    for (float momentum : {0.0f, 0.8f})
      for (float decay : {0.0f, 0.1f}) {
        INFO("centered " << centered << ", momentum " << momentum << ", decay " << decay);
        const auto config = optimizers::rmsprop(0.01f, 0.9f, momentum, 1e-7f, centered, decay);
        test::check_against_reference(config, [&](int) { return 0.01; }, 8);
      }
}

TEST_CASE("rmsprop's first step is lr g / sqrt((1 - rho) g^2 + epsilon)",
          "[model][optim][rmsprop]") {
  // With epsilon under the root (Keras) a tiny gradient moves much less than
  // with epsilon added to the root (PyTorch).
  const float lr = 0.01f, rho = 0.9f, epsilon = 1e-4f;
  auto optim = make_optimizer(optimizers::rmsprop(lr, rho, 0.0f, epsilon), 2);
  REQUIRE(optim);
  std::vector<float> w{0.0f, 0.0f};
  const std::vector<float> g{2.0f, 1e-3f};
  (*optim)->apply(w.data(), g.data());
  for (size_t i = 0; i < 2; ++i) {
    const double gi = g[i];
    const double expected = -double{lr} * gi / std::sqrt((1 - double{rho}) * gi * gi + epsilon);
    CHECK(w[i] == Approx(expected).epsilon(1e-6));
  }
  const double pytorch_like = -double{lr} * 1e-3 / (std::sqrt(0.1 * 1e-6) + epsilon);
  CHECK(std::abs(w[1]) < 0.5 * std::abs(pytorch_like));
}

TEST_CASE("rmsprop keeps a state plane per moment it uses and continues bit for bit from "
          "them in a fresh optimizer",
          "[model][optim][rmsprop]") {
  const size_t size = 50;
  for (bool centered : {false, true})
    for (float momentum : {0.0f, 0.5f}) {
      const auto config = optimizers::rmsprop(0.01f, 0.9f, momentum, 1e-7f, centered);
      INFO("centered " << centered << ", momentum " << momentum);
      auto first = make_optimizer(config, size);
      auto second = make_optimizer(config, size);
      REQUIRE(first);
      REQUIRE(second);
      std::vector<float> w1(size, 1.0f), g(size);
      for (size_t i = 0; i < size; ++i)
        g[i] = std::sin(static_cast<float>(i));
      (*first)->apply(w1.data(), g.data());
      const size_t planes = 1 + (momentum > 0.0f) + centered;
      CHECK((*first)->state().size() == planes * size);
      REQUIRE((*second)->restore((*first)->state(), (*first)->steps()));
      auto w2 = w1;
      (*first)->apply(w1.data(), g.data());
      (*second)->apply(w2.data(), g.data());
      CHECK(std::memcmp(w1.data(), w2.data(), size * sizeof(float)) == 0);
      CHECK_FALSE((*second)->restore(std::vector<float>((planes + 1) * size), 1));
    }
}

TEST_CASE("rmsprop refuses a rho below 0 or from 1 up and an epsilon that is not positive, "
          "naming the option",
          "[model][optim][rmsprop]") {
  const std::vector<std::pair<optimizer_config, std::string>> table{
    {optimizers::rmsprop(1e-3f, 1.0f), "--rho must be at least 0 and below 1, got 1"},
    {optimizers::rmsprop(1e-3f, -0.5f), "--rho must be at least 0 and below 1, got -0.5"},
    {optimizers::rmsprop(1e-3f, 0.9f, 0.0f, 0.0f), "--epsilon must be positive"},
    {optimizers::rmsprop(1e-3f, 0.9f, -1.0f), "--momentum must be 0 or more, got -1"},
  };
  for (const auto& [config, named] : table) {
    auto refused = make_optimizer(config, 1);
    REQUIRE_FALSE(refused);
    CHECK(refused.error().code == errc::invalid_argument);
    CHECK(refused.error().message.find(named) != std::string::npos);
  }
}
