// The elementwise activations a layer applies after it, or a layer of its
// own: Keras's relu, tanh, sigmoid, leaky_relu (negative slope 0.2), elu
// (alpha 1) and gelu (the exact form, with erf).
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace troupe::detail {

/// Names an activation; none is linear.
enum class activation_kind { none, relu, tanh, sigmoid, leaky_relu, elu, gelu };

/// Returns the activation's name ("relu"; "" for none).
const char* activation_name(activation_kind kind);

/// Returns the activation named `name` ("relu", ..., "linear" or "" for none).
std::optional<activation_kind> find_activation(const std::string& name);

/// Writes y = f(z) for `count` values.
void activate(activation_kind kind, const float* z, float* y, size_t count);

/// Tells whether activation_backward needs the input z (gelu), not only y.
bool needs_input(activation_kind kind);

/// Multiplies each dy by f'(z) (z the input, y = f(z)), into dz (which may
/// be dy itself); z may be null where needs_input says so.
void activation_backward(activation_kind kind, const float* z, const float* y,
                         const float* dy, float* dz, size_t count);

} // namespace troupe::detail
