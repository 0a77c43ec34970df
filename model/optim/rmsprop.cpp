// RMSprop's loops over flat arrays, one per combination of centered and
// momentum, so that each stays a plain vectorizable loop.
#include "model/optim/rmsprop.hpp"

#include <algorithm>
#include <cmath>

#include "model/flush_denormals.hpp"
#include "model/optim/lr_schedule.hpp"
#include "model/optim/weight_decay.hpp"

namespace troupe::detail {

namespace {

struct rmsprop_coefficients {
  float lr, rho, one_minus_rho, epsilon, momentum;
};

// Keras's operations in Keras's order (rmsprop.hpp); a and mom are only read
// when their flag is on.
template <bool centered, bool with_momentum>
void rmsprop_loop(float* __restrict w, const float* __restrict g, float* __restrict v,
                  float* __restrict a, float* __restrict mom, size_t count,
                  const rmsprop_coefficients& c) {
  for (size_t i = 0; i < count; ++i) {
    const float gi = g[i];
    const float vi = c.rho * v[i] + c.one_minus_rho * (gi * gi);
    v[i] = vi;
    float denominator;
    if constexpr (centered) {
      const float ai = c.rho * a[i] + c.one_minus_rho * gi;
      a[i] = ai;
      denominator = vi - ai * ai + c.epsilon;
    } else {
      denominator = vi + c.epsilon;
    }
    const float increment = c.lr * gi / std::sqrt(denominator);
    if constexpr (with_momentum) {
      const float mi = c.momentum * mom[i] + increment;
      mom[i] = mi;
      w[i] -= mi;
    } else {
      w[i] -= increment;
    }
  }
}

} // namespace

rmsprop::rmsprop(const optimizer_config& config, size_t size)
  : given_(config), config_(config),
    size_(size),
    velocity_(size, 0.0f),
    momentum_(config.momentum > 0.0f ? size : 0, 0.0f),
    average_(config.centered ? size : 0, 0.0f) {
}

void rmsprop::apply_scaled(float* weights, const float* gradient, float lr_scale) {
  const float lr = scheduled_learning_rate(config_, steps_++) * lr_scale;
  if (config_.weight_decay != 0.0f)
    decay_weights(weights, size_, config_.weight_decay, lr);
  flush_denormals_scope flush;
  const rmsprop_coefficients c{lr, config_.rho, 1.0f - config_.rho, config_.epsilon,
                               config_.momentum};
  float* v = velocity_.data();
  float* a = average_.data();
  float* mom = momentum_.data();
  const bool with_momentum = !momentum_.empty();
  if (config_.centered) {
    if (with_momentum)
      rmsprop_loop<true, true>(weights, gradient, v, a, mom, size_, c);
    else
      rmsprop_loop<true, false>(weights, gradient, v, a, mom, size_, c);
  } else if (with_momentum) {
    rmsprop_loop<false, true>(weights, gradient, v, a, mom, size_, c);
  } else {
    rmsprop_loop<false, false>(weights, gradient, v, a, mom, size_, c);
  }
}

std::vector<float> rmsprop::state() const {
  std::vector<float> state = velocity_;
  state.insert(state.end(), momentum_.begin(), momentum_.end());
  state.insert(state.end(), average_.begin(), average_.end());
  return state;
}

bool rmsprop::restore(const std::vector<float>& state, uint64_t steps) {
  if (state.size() != velocity_.size() + momentum_.size() + average_.size())
    return false;
  auto from = state.begin();
  for (auto* plane : {&velocity_, &momentum_, &average_}) {
    std::copy_n(from, plane->size(), plane->begin());
    from += static_cast<std::ptrdiff_t>(plane->size());
  }
  steps_ = steps;
  return true;
}

} // namespace troupe::detail
