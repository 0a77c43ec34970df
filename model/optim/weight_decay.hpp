// Keras 3's decoupled weight decay, the same for every optimizer: before the
// update, w = w - w * weight_decay * lr with the step's learning rate.
#pragma once

#include <cstddef>

namespace troupe::detail {

/// Decays `count` weights in host memory: w[i] = w[i] - w[i] * weight_decay * lr.
void decay_weights(float* weights, size_t count, float weight_decay, float lr);

} // namespace troupe::detail
