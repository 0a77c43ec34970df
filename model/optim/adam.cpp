// Adam's bookkeeping; each step is the backend's adam_update or, on a
// round's weighted sum, adam_update_sum (on the CPU backend:
// model/backend/cpu/adam_kernel.cpp).
#include "model/optim/adam.hpp"

#include <utility>

#include "model/backend/cpu/eigen_backend.hpp"
#include "model/check.hpp"
#include "model/optim/lr_schedule.hpp"
#include "model/optim/weight_decay.hpp"

namespace troupe::detail {

adam_coefficients adam_step_coefficients(const optimizer_config& config, uint64_t step) {
  auto settings = adam_settings(config);
  settings.learning_rate = scheduled_learning_rate(config, step == 0 ? 0 : step - 1);
  return adam_step_coefficients(settings, step);
}

adam_hyperparameters adam_settings(const optimizer_config& config) {
  adam_hyperparameters h;
  h.learning_rate = config.learning_rate;
  h.beta1 = config.beta1;
  h.beta2 = config.beta2;
  h.epsilon = config.epsilon;
  return h;
}

adam::adam(const optimizer_config& config, size_t size)
  : adam(config, size, nullptr) {
}

adam::adam(const optimizer_config& config, size_t size, backend& compute)
  : adam(config, size, &compute) {
}

adam::adam(const optimizer_config& config, size_t size, backend* compute)
  : own_backend_(compute == nullptr ? make_eigen_backend() : nullptr),
    compute_(compute == nullptr ? own_backend_.get() : compute),
    given_(config),
    config_(config),
    m_(*compute_, size),
    v_(*compute_, size) {
  TROUPE_ASSERT(config.weight_decay == 0.0f || compute_->host_memory());
  compute_->fill_zero(m_.data(), size * sizeof(float));
  compute_->fill_zero(v_.data(), size * sizeof(float));
}

void adam::decay(float* weights, const float* skip_if, float lr_scale) const {
  if (config_.weight_decay == 0.0f || (skip_if != nullptr && *skip_if != 0.0f))
    return;
  const float lr = scheduled_learning_rate(config_, steps_ - 1) * lr_scale;
  decay_weights(weights, m_.size(), config_.weight_decay, lr);
}

void adam::apply_scaled(float* weights, const float* gradient, float lr_scale) {
  ++steps_;
  auto coefficients = adam_step_coefficients(config_, steps_);
  coefficients.alpha *= lr_scale; // alpha = lr x bias correction: the step scales with it
  coefficients.skip_if = std::exchange(skip_if_, nullptr);
  coefficients.weights_shared = weights_shared_;
  decay(weights, coefficients.skip_if, lr_scale);
  compute_->adam_update(weights, gradient, m_.data(), v_.data(), m_.size(), coefficients);
}

void adam::apply_weighted_sum(float* weights, const std::vector<weighted_gradient>& terms) {
  ++steps_;
  auto coefficients = adam_step_coefficients(config_, steps_);
  coefficients.skip_if = std::exchange(skip_if_, nullptr);
  coefficients.weights_shared = weights_shared_;
  decay(weights, coefficients.skip_if, 1.0f);
  compute_->adam_update_sum(weights, terms, m_.data(), v_.data(), m_.size(), coefficients);
}

std::vector<float> adam::state() const {
  std::vector<float> state(2 * m_.size());
  m_.download(state.data(), m_.size());
  v_.download(state.data() + m_.size(), v_.size());
  return state;
}

bool adam::restore(const std::vector<float>& state, uint64_t steps) {
  if (state.size() != 2 * m_.size())
    return false;
  m_.upload(state.data(), m_.size());
  v_.upload(state.data() + m_.size(), v_.size());
  steps_ = steps;
  return true;
}

} // namespace troupe::detail
