// Adam's bookkeeping; each step is the backend's adam_update (on the CPU
// backend: model/backend/cpu/adam_kernel.cpp).
#include "model/optim/adam.hpp"

#include <algorithm>

#include "model/backend/cpu/adam_kernel.hpp"
#include "model/backend/cpu/eigen_backend.hpp"

namespace troupe {

adam_coefficients adam_step_coefficients(const optimizer_config& config, uint64_t step) {
  return adam_step_coefficients(adam_settings(config), step);
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
    config_(config),
    m_(*compute_, size),
    v_(*compute_, size) {
  compute_->fill_zero(m_.data(), size * sizeof(float));
  compute_->fill_zero(v_.data(), size * sizeof(float));
}

void adam::apply_scaled(float* weights, const float* gradient, float lr_scale) {
  ++steps_;
  auto coefficients = adam_step_coefficients(config_, steps_);
  coefficients.alpha *= lr_scale; // alpha = lr x bias correction: the step scales with it
  compute_->adam_update(weights, gradient, m_.data(), v_.data(), m_.size(), coefficients);
}

void adam::apply_weighted_sum(float* weights, const std::vector<weighted_gradient>& terms) {
  if (!own_backend_) { // everything in the backend's memory: its sum, then its step
    if (sum_.size() == 0)
      sum_ = device_array<float>(*compute_, m_.size());
    compute_->weighted_sum(terms, m_.size(), sum_.data());
    apply(weights, sum_.data());
    return;
  }
  if (terms.size() < 2) {
    optimizer::apply_weighted_sum(weights, terms);
    return;
  }
  ++steps_;
  const auto coefficients = adam_step_coefficients(config_, steps_);
  const size_t count = m_.size();
  const weighted_gradient& last = terms.back();
  if (terms.size() == 2) {
    adam_sum2_kernel(weights, terms[0].gradient, terms[0].weight, last.gradient, last.weight,
                     m_.data(), v_.data(), count, coefficients);
    return;
  }
  // All terms but the last are summed a block at a time; the last joins the
  // step's loop (1 x the partial sum is that sum, so the bits are the same).
  const std::vector<weighted_gradient> head(terms.begin(), terms.end() - 1);
  constexpr size_t block = 2048; // 8 KB: stays in L1 until the step reads it
  float partial[block];
  for (size_t offset = 0; offset < count; offset += block) {
    const size_t n = std::min(block, count - offset);
    weighted_gradient_sum(head, offset, n, partial);
    adam_sum2_kernel(weights + offset, partial, 1.0f, last.gradient + offset, last.weight,
                     m_.data() + offset, v_.data() + offset, n, coefficients);
  }
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

} // namespace troupe
