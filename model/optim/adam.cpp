// Adam's bookkeeping; the loop itself lives in adam_kernel.cpp.
#include "model/optim/adam.hpp"

#include <cmath>

#include "model/optim/adam_kernel.hpp"

namespace troupe {

adam_coefficients adam_step_coefficients(const adam_hyperparameters& h, uint64_t step) {
  // The CUDA backend's adam_update_counted computes the same in double.
  const double t = static_cast<double>(step);
  const double correction = std::sqrt(1.0 - std::pow(double{h.beta2}, t))
                            / (1.0 - std::pow(double{h.beta1}, t));
  adam_coefficients c;
  c.alpha = static_cast<float>(h.learning_rate * correction);
  c.beta1 = h.beta1;
  c.beta2 = h.beta2;
  c.epsilon = h.epsilon;
  return c;
}

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
  : config_(config), m_(size, 0.0f), v_(size, 0.0f) {
}

void adam::apply(float* weights, const float* gradient) {
  ++steps_;
  adam_kernel(weights, gradient, m_.data(), v_.data(), m_.size(),
              adam_step_coefficients(config_, steps_));
}

std::vector<float> adam::state() const {
  std::vector<float> state(m_);
  state.insert(state.end(), v_.begin(), v_.end());
  return state;
}

bool adam::restore(const std::vector<float>& state, uint64_t steps) {
  if (state.size() != 2 * m_.size())
    return false;
  std::copy(state.begin(), state.begin() + m_.size(), m_.begin());
  std::copy(state.begin() + m_.size(), state.end(), v_.begin());
  steps_ = steps;
  return true;
}

} // namespace troupe
