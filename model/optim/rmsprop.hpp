// RMSprop with Keras 3's formula (epsilon inside the root), lr the step's
// scheduled rate:
//   v  = rho * v + (1 - rho) * g^2
//   a  = rho * a + (1 - rho) * g               (centered)
//   d  = v + epsilon, or v - a^2 + epsilon     (centered)
//   u  = lr * g / sqrt(d)
//   w -= u, or with momentum: mom = momentum * mom + u; w -= mom
#pragma once

#include <vector>

#include "model/optim/lr_schedule.hpp"
#include "model/optim/optimizer.hpp"

namespace troupe::detail {

/// Keeps the mean square (and the momentum and mean gradient where those
/// are on) and applies the Keras RMSprop update on the host.
class rmsprop final : public optimizer {
public:
  rmsprop(const optimizer_config& config, size_t size);

  void apply_scaled(float* weights, const float* gradient, float lr_scale) override;
  void set_learning_rate_factor(float factor) override {
    config_ = with_learning_rate_factor(given_, factor);
  }
  uint64_t steps() const override { return steps_; }
  /// Returns the planes v, then mom with momentum, then a when centered.
  std::vector<float> state() const override;
  bool restore(const std::vector<float>& state, uint64_t steps) override;
  size_t size() const override { return size_; }

private:
  const optimizer_config given_;
  optimizer_config config_; // given_ with the learning-rate factor
  size_t size_;
  std::vector<float> velocity_; // (size): v, the mean square
  std::vector<float> momentum_; // (size) with momentum > 0, else empty
  std::vector<float> average_;  // (size) when centered, else empty: a, the mean gradient
  uint64_t steps_ = 0;
};

} // namespace troupe::detail
