// The CPU backend's Adam loop over flat arrays (adam_update and
// adam_update_counted), in its own translation unit so that GCC vectorizes it
// (inlined into a lambda it has been seen to stay scalar).
#pragma once

#include <cstddef>

#include "model/backend/adam_coefficients.hpp"

namespace troupe::detail {

/// Applies one Adam step to `count` weights (see optim/adam.hpp).
void adam_kernel(float* weights, const float* gradient, float* m, float* v,
                 size_t count, const adam_coefficients& c);

/// Applies one Adam step whose gradient is first_weight * first[i] +
/// last_weight * last[i], computed in that order inside the step's loop: a
/// round's mean of two terms read once, where a separate sum would be
/// written and read again.
void adam_sum2_kernel(float* weights, const float* first, float first_weight,
                      const float* last, float last_weight, float* m, float* v,
                      size_t count, const adam_coefficients& c);

/// out[i] = weight * gradient[i] (first) or out[i] += weight * gradient[i].
void weighted_add_kernel(float* out, const float* gradient, float weight, size_t count,
                         bool first);

} // namespace troupe::detail
