// SGD with momentum.
#include "model/optim/sgd.hpp"

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

} // namespace troupe
