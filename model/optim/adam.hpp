// Adam with the Keras formula (epsilon added to sqrt(v), no bias-corrected
// moments; the correction is folded into the step size), lr the scheduled
// rate of step t - 1; AdamW is the same after the weight decay pass
// (weight_decay.hpp):
//   t     += 1
//   alpha  = lr * sqrt(1 - beta2^t) / (1 - beta1^t)
//   m      = beta1 * m + (1 - beta1) * g
//   v      = beta2 * v + (1 - beta2) * g^2
//   w     -= alpha * m / (sqrt(v) + epsilon)
#pragma once

#include <memory>
#include <vector>

#include "model/backend/backend.hpp"
#include "model/backend/adam_coefficients.hpp"
#include "model/optim/lr_schedule.hpp"
#include "model/optim/optimizer.hpp"

namespace troupe::detail {

/// Returns the coefficients of Adam's step number `step` (1-based), at the
/// learning rate the schedule gives that step.
adam_coefficients adam_step_coefficients(const optimizer_config& config, uint64_t step);

/// Picks Adam's hyperparameters out of an optimizer_config.
adam_hyperparameters adam_settings(const optimizer_config& config);

/// Keeps Adam's two moments and applies the Keras update as the backend op
/// adam_update: the one Adam loop of each backend serves the store and the
/// trainers alike. With weight decay (AdamW) it steps in host memory only.
class adam final : public optimizer {
public:
  /// Keeps the moments in host memory and steps on a CPU backend of its own.
  adam(const optimizer_config& config, size_t size);
  /// Keeps the moments in `compute`'s memory and steps there; apply() then
  /// takes weights and gradient in that memory too (host memory with weight
  /// decay).
  adam(const optimizer_config& config, size_t size, backend& compute);

  adam(const adam&) = delete;
  adam& operator=(const adam&) = delete;

  void apply_scaled(float* weights, const float* gradient, float lr_scale) override;
  void apply_weighted_sum(float* weights, const std::vector<weighted_gradient>& terms) override;
  void set_learning_rate_factor(float factor) override {
    config_ = with_learning_rate_factor(given_, factor);
  }
  uint64_t steps() const override { return steps_; }
  std::vector<float> state() const override;
  bool restore(const std::vector<float>& state, uint64_t steps) override;
  size_t size() const override { return m_.size(); }
  bool skip_next_step_if(const float* flag) override {
    skip_if_ = flag;
    return true;
  }
  void set_weights_shared(bool shared) override { weights_shared_ = shared; }

private:
  adam(const optimizer_config& config, size_t size, backend* compute);
  /// Decays the weights ahead of step steps_ unless `skip_if` says to skip it.
  void decay(float* weights, const float* skip_if, float lr_scale) const;

  std::unique_ptr<backend> own_backend_; // set when no backend was given
  backend* compute_;
  const optimizer_config given_;
  optimizer_config config_; // given_ with the learning-rate factor
  device_array<float> m_; // (size): first moment
  device_array<float> v_; // (size): second moment
  uint64_t steps_ = 0;
  const float* skip_if_ = nullptr; // for the next step only
  bool weights_shared_ = false;
};

} // namespace troupe::detail
