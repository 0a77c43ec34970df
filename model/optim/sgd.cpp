// SGD with momentum and decoupled weight decay.
#include "model/optim/sgd.hpp"

#include "model/flush_denormals.hpp"
#include "model/optim/lr_schedule.hpp"
#include "model/optim/weight_decay.hpp"

namespace troupe::detail {

sgd::sgd(const optimizer_config& config, size_t size)
  : given_(config), config_(config), velocity_(size, 0.0f) {
}

void sgd::apply_scaled(float* __restrict weights, const float* __restrict gradient,
                       float lr_scale) {
  const float lr = scheduled_learning_rate(config_, steps_++) * lr_scale;
  const size_t count = velocity_.size();
  if (config_.weight_decay != 0.0f)
    decay_weights(weights, count, config_.weight_decay, lr);
  flush_denormals_scope flush;
  const float momentum = config_.momentum;
  float* __restrict velocity = velocity_.data();
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

} // namespace troupe::detail
