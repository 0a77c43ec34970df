// Stochastic gradient descent with optional (Nesterov) momentum, as Keras,
// lr the step's scheduled rate (after weight decay: weight_decay.hpp):
//   velocity = momentum * velocity - lr * g
//   w += velocity                              (plain momentum)
//   w += momentum * velocity - lr * g          (Nesterov)
// With momentum 0 this is w -= lr * g.
#pragma once

#include <vector>

#include "model/optim/lr_schedule.hpp"
#include "model/optim/optimizer.hpp"

namespace troupe::detail {

/// Keeps the velocity and applies the Keras SGD update.
class sgd final : public optimizer {
public:
  sgd(const optimizer_config& config, size_t size);

  void apply_scaled(float* weights, const float* gradient, float lr_scale) override;
  void set_learning_rate_factor(float factor) override {
    config_ = with_learning_rate_factor(given_, factor);
  }
  uint64_t steps() const override { return steps_; }
  std::vector<float> state() const override { return velocity_; }
  bool restore(const std::vector<float>& state, uint64_t steps) override;
  size_t size() const override { return velocity_.size(); }

private:
  const optimizer_config given_;
  optimizer_config config_; // given_ with the learning-rate factor
  std::vector<float> velocity_;
  uint64_t steps_ = 0;
};

} // namespace troupe::detail
