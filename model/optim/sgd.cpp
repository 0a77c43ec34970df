// SGD with momentum.
#include "model/optim/sgd.hpp"

#include "model/backend/cpu/adam_kernel.hpp"
#include "model/flush_denormals.hpp"
#include "model/optim/adam.hpp"

namespace troupe {

sgd::sgd(const optimizer_config& config, size_t size)
  : config_(config), velocity_(size, 0.0f) {
}

void sgd::apply_scaled(float* __restrict weights, const float* __restrict gradient,
                       float lr_scale) {
  ++steps_;
  flush_denormals_scope flush;
  const float lr = config_.learning_rate * lr_scale;
  const float momentum = config_.momentum;
  float* __restrict velocity = velocity_.data();
  const size_t count = velocity_.size();
  if (config_.nesterov) {
    for (size_t i = 0; i < count; ++i) {
      velocity[i] = momentum * velocity[i] - lr * gradient[i];
      weights[i] += momentum * velocity[i] - lr * gradient[i];
    }
  } else {
    for (size_t i = 0; i < count; ++i) {
      velocity[i] = momentum * velocity[i] - lr * gradient[i];
      weights[i] += velocity[i];
    }
  }
}

bool sgd::restore(const std::vector<float>& state, uint64_t steps) {
  if (state.size() != velocity_.size())
    return false;
  velocity_ = state;
  steps_ = steps;
  return true;
}

void weighted_gradient_sum(const std::vector<weighted_gradient>& terms, size_t offset,
                           size_t count, float* out) {
  for (size_t t = 0; t < terms.size(); ++t)
    weighted_add_kernel(out, terms[t].gradient + offset, terms[t].weight, count, t == 0);
}

void optimizer::apply_weighted_sum(float* weights, const std::vector<weighted_gradient>& terms) {
  std::vector<float> gradient(size());
  weighted_gradient_sum(terms, 0, gradient.size(), gradient.data());
  apply(weights, gradient.data());
}

} // namespace troupe
