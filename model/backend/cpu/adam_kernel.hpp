// The CPU backend's Adam loop over flat arrays (adam_update and
// adam_update_counted), in its own translation unit so that GCC vectorizes it
// (inlined into a lambda it has been seen to stay scalar).
#pragma once

#include <cstddef>

#include "model/optim/adam_coefficients.hpp"

namespace troupe {

/// Applies one Adam step to `count` weights (see optim/adam.hpp).
void adam_kernel(float* weights, const float* gradient, float* m, float* v,
                 size_t count, const adam_coefficients& c);

} // namespace troupe
