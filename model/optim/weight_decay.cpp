// The weight-decay pass, in Keras's order of operations.
#include "model/optim/weight_decay.hpp"

#include "model/flush_denormals.hpp"

namespace troupe::detail {

void decay_weights(float* __restrict weights, size_t count, float weight_decay, float lr) {
  flush_denormals_scope flush;
  for (size_t i = 0; i < count; ++i)
    weights[i] = weights[i] - weights[i] * weight_decay * lr;
}

} // namespace troupe::detail
