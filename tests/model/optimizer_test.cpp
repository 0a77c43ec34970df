// Closed-form checks of Adam (Keras formula) and SGD with momentum; what
// every optimizer shares: fused sums, scaled steps, resuming mid-schedule.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "model/optim/adam.hpp"
#include "model/optim/sgd.hpp"

using namespace troupe;

TEST_CASE("adam's first two steps follow the Keras formula", "[model][optim][adam]") {
  optimizer_config config; // lr 1e-3, b1 .9, b2 .999, eps 1e-7
  auto optim = make_optimizer(config, 3);
  REQUIRE(optim);
  std::vector<float> w{1.0f, -2.0f, 0.5f};
  const std::vector<float> g1{0.5f, -0.25f, 0.0f};
  const std::vector<float> g2{-1.0f, 0.1f, 2.0f};
  (*optim)->apply(w.data(), g1.data());
  (*optim)->apply(w.data(), g2.data());
  CHECK((*optim)->steps() == 2u);
  for (size_t i = 0; i < w.size(); ++i) {
    double expected_w = std::vector<double>{1.0, -2.0, 0.5}[i];
    double m = 0, v = 0;
    int t = 0;
    for (double g : {double{g1[i]}, double{g2[i]}}) {
      ++t;
      m = 0.9 * m + 0.1 * g;
      v = 0.999 * v + 0.001 * g * g;
      const double alpha = 1e-3 * std::sqrt(1 - std::pow(0.999, t)) / (1 - std::pow(0.9, t));
      expected_w -= alpha * m / (std::sqrt(v) + 1e-7);
    }
    INFO("weight " << i);
    CHECK(w[i] == Approx(expected_w).epsilon(1e-6));
  }
}

TEST_CASE("adam's first step moves each weight by about lr against the gradient's sign",
          "[model][optim][adam]") {
  optimizer_config config;
  config.learning_rate = 0.01f;
  adam optim(config, 2);
  std::vector<float> w{0.0f, 0.0f};
  const std::vector<float> g{3.0f, -0.001f};
  optim.apply(w.data(), g.data());
  // m = .1 g, sqrt(v) = sqrt(.001)|g|, alpha = lr sqrt(.001) / .1, so the
  // step is lr sign(g) |g| s / (|g| s + eps) with s = sqrt(.001): epsilon
  // only matters for tiny gradients.
  const double s = std::sqrt(0.001);
  CHECK(w[0] == Approx(-0.01 * 3.0 * s / (3.0 * s + 1e-7)).epsilon(1e-5));
  CHECK(w[1] == Approx(0.01 * 0.001 * s / (0.001 * s + 1e-7)).epsilon(1e-5));
  CHECK(w[1] < 0.00998f); // epsilon visibly shortens the tiny gradient's step
}

TEST_CASE("adam's state restores into a fresh optimizer", "[model][optim][adam]") {
  optimizer_config config;
  adam first(config, 4), second(config, 4);
  std::vector<float> w1{1, 2, 3, 4}, g{0.1f, -0.2f, 0.3f, -0.4f};
  first.apply(w1.data(), g.data());
  REQUIRE(second.restore(first.state(), first.steps()));
  auto w2 = w1;
  first.apply(w1.data(), g.data());
  second.apply(w2.data(), g.data());
  CHECK(w1 == w2);
  CHECK_FALSE(second.restore(std::vector<float>(3), 1));
}

TEST_CASE("sgd without momentum is w -= lr g", "[model][optim][sgd]") {
  optimizer_config config;
  config.name = "sgd";
  config.learning_rate = 0.1f;
  auto optim = make_optimizer(config, 2);
  REQUIRE(optim);
  std::vector<float> w{1.0f, -1.0f};
  const std::vector<float> g{2.0f, -4.0f};
  (*optim)->apply(w.data(), g.data());
  CHECK(w[0] == Approx(0.8f));
  CHECK(w[1] == Approx(-0.6f));
}

TEST_CASE("sgd with momentum accumulates velocity as Keras does", "[model][optim][sgd]") {
  optimizer_config config;
  config.name = "sgd";
  config.learning_rate = 0.1f;
  config.momentum = 0.9f;
  sgd plain(config, 1);
  config.nesterov = true;
  sgd nesterov(config, 1);
  float w = 1.0f, wn = 1.0f;
  const float g = 1.0f;
  plain.apply(&w, &g);   // v = -.1, w = .9
  plain.apply(&w, &g);   // v = -.19, w = .71
  nesterov.apply(&wn, &g); // v = -.1, w += .9 * -.1 - .1 = .81
  nesterov.apply(&wn, &g); // v = -.19, w += .9 * -.19 - .1 = .539
  CHECK(w == Approx(0.71f));
  CHECK(wn == Approx(0.539f));
}

TEST_CASE("unknown optimizers and bad learning rates are clear errors",
          "[model][optim]") {
  optimizer_config config;
  config.name = "adagrad";
  auto unknown = make_optimizer(config, 1);
  REQUIRE_FALSE(unknown);
  CHECK(unknown.error().message.find("adagrad") != std::string::npos);
  config.name = "adam";
  config.learning_rate = -1.0f;
  auto negative = make_optimizer(config, 1);
  REQUIRE_FALSE(negative);
  CHECK(negative.error().code == errc::invalid_argument);
}

TEST_CASE("a step on a weighted sum of gradients gives the same bits as the step on that sum",
          "[optimizer]") {
  // Adam fuses the sum into its step (two terms in one loop, more a block at
  // a time); every optimizer must match apply() on the sum made first, also
  // when told its weights are shared (Adam then prefetches them for writing).
  for (const std::string name : {"adam", "adamw", "sgd", "rmsprop"})
    for (size_t term_count : {1, 2, 3, 5})
      for (bool shared : {false, true}) {
        INFO(name << ", " << term_count << " terms, weights shared: " << shared);
        optimizer_config config;
        config.name = name;
        config.momentum = 0.9f;
        config.weight_decay = name == "adamw" ? 0.01f : 0.0f;
        const size_t count = 5000; // over two blocks of 2048, and a partial one
        auto whole = make_optimizer(config, count);
        auto fused = make_optimizer(config, count);
        REQUIRE(whole);
        REQUIRE(fused);
        (*fused)->set_weights_shared(shared);
        std::vector<float> a(count), b(count);
        std::vector<std::vector<float>> gradients(term_count, std::vector<float>(count));
        std::vector<weighted_gradient> terms;
        for (size_t t = 0; t < term_count; ++t) {
          for (size_t i = 0; i < count; ++i)
            gradients[t][i] = std::sin(0.37f * static_cast<float>(i * (t + 1))) * 1e-3f;
          terms.push_back({1.0f / static_cast<float>(t + 2), gradients[t].data()});
        }
        for (size_t i = 0; i < count; ++i)
          a[i] = b[i] = 0.001f * static_cast<float>(i % 97) - 0.05f;
        std::vector<float> sum(count);
        for (int step = 0; step < 3; ++step) {
          std::fill(sum.begin(), sum.end(), 0.0f);
          for (size_t i = 0; i < count; ++i) { // the reference order, written out
            sum[i] = terms[0].weight * gradients[0][i];
            for (size_t t = 1; t < term_count; ++t)
              sum[i] += terms[t].weight * gradients[t][i];
          }
          (*whole)->apply(a.data(), sum.data());
          (*fused)->apply_weighted_sum(b.data(), terms);
        }
        CHECK(std::memcmp(a.data(), b.data(), count * sizeof(float)) == 0);
        CHECK((*whole)->state() == (*fused)->state());
        CHECK((*fused)->steps() == 3);
        CHECK(a != std::vector<float>(count, 0.0f));
      }
}

TEST_CASE("a step at lr times s moves the weights s times as far as the plain step",
          "[optimizer][staleness-lr]") {
  optimizer_config config;
  config.name = "sgd";
  config.learning_rate = 0.5f;
  auto plain = make_optimizer(config, 4);
  auto scaled = make_optimizer(config, 4);
  REQUIRE(plain);
  REQUIRE(scaled);
  std::vector<float> a{1, 2, 3, 4}, b = a;
  const std::vector<float> gradient{0.5f, -1.0f, 2.0f, 0.25f};
  (*plain)->apply(a.data(), gradient.data());
  (*scaled)->apply_scaled(b.data(), gradient.data(), 0.25f);
  for (size_t i = 0; i < 4; ++i) {
    const float base = static_cast<float>(i + 1);
    CHECK(b[i] - base == Approx(0.25f * (a[i] - base)).epsilon(1e-6));
  }
  // Adam: the step is alpha x m / (sqrt(v) + eps), so it scales with alpha.
  config.name = "adam";
  auto adam_plain = make_optimizer(config, 4);
  auto adam_scaled = make_optimizer(config, 4);
  std::vector<float> c{1, 2, 3, 4}, d = c;
  (*adam_plain)->apply(c.data(), gradient.data());
  (*adam_scaled)->apply_scaled(d.data(), gradient.data(), 0.5f);
  for (size_t i = 0; i < 4; ++i) {
    const float base = static_cast<float>(i + 1);
    CHECK(d[i] - base == Approx(0.5f * (c[i] - base)).epsilon(1e-5));
  }
  // A scale of 1 is the plain step, bit for bit.
  std::vector<float> e{1, 2, 3, 4}, f = e;
  auto one_a = make_optimizer(config, 4);
  auto one_b = make_optimizer(config, 4);
  (*one_a)->apply(e.data(), gradient.data());
  (*one_b)->apply_scaled(f.data(), gradient.data(), 1.0f);
  CHECK(std::memcmp(e.data(), f.data(), sizeof(float) * 4) == 0);
}

TEST_CASE("an adam step whose skip flag is set leaves weights and moments as they are",
          "[model][optim][adam]") {
  optimizer_config config;
  auto optim = make_optimizer(config, 3);
  REQUIRE(optim);
  std::vector<float> w{1.0f, -2.0f, 0.5f};
  const std::vector<float> g{0.5f, -0.25f, 1.0f};
  const std::vector<float> poisoned{0.5f, std::nanf(""), 1.0f};
  float flag = 1.0f; // set by a device's NaN check of `poisoned`
  REQUIRE((*optim)->skip_next_step_if(&flag));
  (*optim)->apply_weighted_sum(w.data(), {{1.0f, poisoned.data()}, {1.0f, g.data()}});
  CHECK(w == std::vector<float>{1.0f, -2.0f, 0.5f});
  REQUIRE((*optim)->skip_next_step_if(&flag));
  (*optim)->apply_scaled(w.data(), poisoned.data(), 0.5f);
  CHECK(w == std::vector<float>{1.0f, -2.0f, 0.5f});
  // The flag guards one step only, and a clear flag steps as usual.
  (*optim)->apply(w.data(), g.data());
  const auto after_one = w;
  CHECK(after_one != std::vector<float>{1.0f, -2.0f, 0.5f});
  flag = 0.0f;
  REQUIRE((*optim)->skip_next_step_if(&flag));
  (*optim)->apply(w.data(), g.data());
  CHECK(w != after_one);
  for (float value : w)
    CHECK(std::isfinite(value));
}

TEST_CASE("every optimizer resumed from state() and steps() mid-schedule continues bit for bit",
          "[optimizer][checkpoint][lr-schedule]") {
  // The schedule is a function of the step count restore() sets: a resumed
  // optimizer whose count were lost would step at the warm-up's rates again.
  const auto schedule = schedules::cosine_decay(20, 0.1f, 5, 0.02f);
  for (auto config : {optimizers::adam(0.001f), optimizers::adamw(0.001f, 0.05f),
                      optimizers::sgd(0.001f, 0.9f, true, 0.05f),
                      optimizers::rmsprop(0.001f, 0.9f, 0.5f, 1e-7f, true, 0.05f)}) {
    INFO(config.name);
    config.schedule = schedule;
    const size_t size = 40;
    auto whole = make_optimizer(config, size);
    auto resumed = make_optimizer(config, size);
    auto fresh = make_optimizer(config, size);
    REQUIRE(whole);
    REQUIRE(resumed);
    REQUIRE(fresh);
    std::vector<float> w(size, 0.5f), g(size);
    auto gradient_of_step = [&g](int step) {
      for (size_t i = 0; i < g.size(); ++i)
        g[i] = std::sin(0.2f * static_cast<float>(i) + static_cast<float>(step));
    };
    for (int step = 0; step < 7; ++step) {
      gradient_of_step(step);
      (*whole)->apply(w.data(), g.data());
    }
    REQUIRE((*resumed)->restore((*whole)->state(), (*whole)->steps()));
    REQUIRE((*fresh)->restore((*whole)->state(), 0));
    auto w_resumed = w, w_fresh = w;
    for (int step = 7; step < 12; ++step) {
      gradient_of_step(step);
      (*whole)->apply(w.data(), g.data());
      (*resumed)->apply(w_resumed.data(), g.data());
      (*fresh)->apply(w_fresh.data(), g.data());
    }
    CHECK(std::memcmp(w.data(), w_resumed.data(), size * sizeof(float)) == 0);
    CHECK((*whole)->state() == (*resumed)->state());
    CHECK((*resumed)->steps() == 12u);
    CHECK(w_fresh != w); // the step count, not only the state, decides the rate
  }
}
