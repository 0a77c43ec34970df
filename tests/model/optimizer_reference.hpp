// Keras 3's update rules for one weight in double precision, written from
// the formulas (not from the optimizers under test), for the tests to follow
// a float optimizer over several steps.
#pragma once

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <vector>

#include "model/optim/optimizer.hpp"

namespace troupe::test {

/// Follows one weight under `config` in double: each step first decays the
/// weight (w -= w * weight_decay * lr), then applies the optimizer's rule.
class reference_weight {
public:
  reference_weight(const optimizer_config& config, double w) : c_(config), w_(w) {}

  /// Applies the next step with gradient g at learning rate lr (the
  /// schedule's rate of this step, which the caller computes).
  void step(double g, double lr) {
    w_ -= w_ * c_.weight_decay * lr;
    ++t_;
    if (c_.name == "adam" || c_.name == "adamw")
      adam(g, lr);
    else if (c_.name == "sgd")
      sgd(g, lr);
    else
      rmsprop(g, lr);
  }

  double value() const { return w_; }

private:
  void adam(double g, double lr) {
    const double b1 = c_.beta1, b2 = c_.beta2, t = static_cast<double>(t_);
    m_ = b1 * m_ + (1 - b1) * g;
    v_ = b2 * v_ + (1 - b2) * g * g;
    const double alpha = lr * std::sqrt(1 - std::pow(b2, t)) / (1 - std::pow(b1, t));
    w_ -= alpha * m_ / (std::sqrt(v_) + c_.epsilon);
  }

  void sgd(double g, double lr) {
    m_ = c_.momentum * m_ - lr * g; // the velocity
    w_ += c_.nesterov ? c_.momentum * m_ - lr * g : m_;
  }

  void rmsprop(double g, double lr) {
    const double rho = c_.rho;
    v_ = rho * v_ + (1 - rho) * g * g;
    double denominator = v_ + c_.epsilon;
    if (c_.centered) {
      a_ = rho * a_ + (1 - rho) * g;
      denominator = v_ - a_ * a_ + c_.epsilon;
    }
    const double increment = lr * g / std::sqrt(denominator);
    m_ = c_.momentum * m_ + increment; // the momentum; with 0 it is the increment
    w_ -= m_;
  }

  optimizer_config c_;
  double w_;
  double m_ = 0, v_ = 0, a_ = 0;
  uint64_t t_ = 0;
};

/// Runs a float optimizer of `config` and one reference_weight per weight
/// for `steps` steps on the same gradients (sign-changing, |g| <= 1), step t
/// at lr_of_step(t), and checks that each weight moved as far as its
/// reference: within 1e-5 relative or 2e-6 absolute (float rounding over
/// the steps).
template <class Rate>
void check_against_reference(const optimizer_config& config, Rate lr_of_step, int steps) {
  const std::vector<float> start{1.0f, -2.0f, 0.5f, 0.0f, 3.0f, -0.25f};
  auto optim = make_optimizer(config, start.size());
  REQUIRE(optim);
  std::vector<float> w = start, g(start.size());
  std::vector<reference_weight> reference;
  for (float x : start)
    reference.emplace_back(config, x);
  for (int t = 0; t < steps; ++t) {
    for (size_t i = 0; i < g.size(); ++i) {
      g[i] = static_cast<float>(std::sin(1.3 * static_cast<double>(i + 1) + 0.7 * t));
      reference[i].step(g[i], lr_of_step(t));
    }
    (*optim)->apply(w.data(), g.data());
  }
  CHECK((*optim)->steps() == static_cast<uint64_t>(steps));
  for (size_t i = 0; i < w.size(); ++i) {
    INFO("weight " << i << " after " << steps << " steps");
    const double moved = double{w[i]} - start[i];
    CHECK(moved == Approx(reference[i].value() - start[i]).epsilon(1e-5).margin(2e-6));
  }
}

} // namespace troupe::test
