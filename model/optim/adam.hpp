// Adam with the Keras formula (epsilon added to sqrt(v), no bias-corrected
// moments; the correction is folded into the step size):
//   t     += 1
//   alpha  = lr * sqrt(1 - beta2^t) / (1 - beta1^t)
//   m      = beta1 * m + (1 - beta1) * g
//   v      = beta2 * v + (1 - beta2) * g^2
//   w     -= alpha * m / (sqrt(v) + epsilon)
#pragma once

#include <vector>

#include "model/backend/backend.hpp"
#include "model/optim/optimizer.hpp"

namespace troupe {

/// Returns the coefficients of Adam's step number `step` (1-based).
adam_coefficients adam_step_coefficients(const adam_hyperparameters& h, uint64_t step);
adam_coefficients adam_step_coefficients(const optimizer_config& config, uint64_t step);

/// Picks Adam's hyperparameters out of an optimizer_config.
adam_hyperparameters adam_settings(const optimizer_config& config);

/// Keeps Adam's two moments and applies the Keras update.
class adam final : public optimizer {
public:
  adam(const optimizer_config& config, size_t size);

  void apply(float* weights, const float* gradient) override;
  uint64_t steps() const override { return steps_; }
  std::vector<float> state() const override;
  bool restore(const std::vector<float>& state, uint64_t steps) override;
  size_t size() const override { return m_.size(); }

private:
  optimizer_config config_;
  std::vector<float> m_;
  std::vector<float> v_;
  uint64_t steps_ = 0;
};

} // namespace troupe
