// The activations and their derivatives, value by value, written once for
// the host and for CUDA kernels (the CPU's layers and their CUDA twins).
// The float functions are C's (tanhf, expf, expm1f, erff): on the host the
// ones std::tanh and friends call for a float; CUDA's may differ from them
// in the last bits.
#pragma once

#include <math.h>

#include "model/layers/activations.hpp"
#include "model/layers/host_device.hpp"

namespace troupe::detail::activation_math {

constexpr float leaky_slope = 0.2f; // Keras 3's LeakyReLU and leaky_relu

/// Returns f(z).
TROUPE_HOST_DEVICE inline float apply(activation_kind kind, float z) {
  switch (kind) {
  case activation_kind::none:
    return z;
  case activation_kind::relu:
    return z > 0.0f ? z : 0.0f;
  case activation_kind::tanh:
    return tanhf(z);
  case activation_kind::sigmoid:
    return 1.0f / (1.0f + expf(-z));
  case activation_kind::leaky_relu:
    return z > 0.0f ? z : leaky_slope * z;
  case activation_kind::elu:
    return z > 0.0f ? z : expm1f(z);
  case activation_kind::gelu:
    return 0.5f * z * (1.0f + erff(z * static_cast<float>(M_SQRT1_2)));
  }
  return z;
}

/// Returns f'(z), from y = f(z) except for gelu, which reads z.
TROUPE_HOST_DEVICE inline float slope(activation_kind kind, float z, float y) {
  switch (kind) {
  case activation_kind::none:
    return 1.0f;
  case activation_kind::relu: // y > 0 exactly where z > 0, for these three
    return y > 0.0f ? 1.0f : 0.0f;
  case activation_kind::tanh:
    return 1.0f - y * y;
  case activation_kind::sigmoid:
    return y * (1.0f - y);
  case activation_kind::leaky_relu:
    return y > 0.0f ? 1.0f : leaky_slope;
  case activation_kind::elu:
    return y > 0.0f ? 1.0f : y + 1.0f;
  case activation_kind::gelu: {
    const float cdf = 0.5f * (1.0f + erff(z * static_cast<float>(M_SQRT1_2)));
    const float pdf = expf(-0.5f * z * z) * static_cast<float>(0.5 * M_2_SQRTPI * M_SQRT1_2);
    return cdf + z * pdf;
  }
  }
  return 1.0f;
}

/// Tells whether slope needs the input z (gelu), not only y.
TROUPE_HOST_DEVICE constexpr bool needs_input(activation_kind kind) {
  return kind == activation_kind::gelu;
}

} // namespace troupe::detail::activation_math
