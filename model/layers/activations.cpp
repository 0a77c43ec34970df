// The activations and their derivatives, value by value.
#include "model/layers/activations.hpp"

#include <algorithm>

#include "model/layers/activation_math.hpp"

namespace troupe::detail {

using activation_math::apply;
using activation_math::leaky_slope;
using activation_math::slope;

const char* activation_name(activation_kind kind) {
  switch (kind) {
  case activation_kind::none:
    return "";
  case activation_kind::relu:
    return "relu";
  case activation_kind::tanh:
    return "tanh";
  case activation_kind::sigmoid:
    return "sigmoid";
  case activation_kind::leaky_relu:
    return "leaky_relu";
  case activation_kind::elu:
    return "elu";
  case activation_kind::gelu:
    return "gelu";
  }
  return "";
}

std::optional<activation_kind> find_activation(const std::string& name) {
  if (name.empty() || name == "linear")
    return activation_kind::none;
  for (auto kind : {activation_kind::relu, activation_kind::tanh, activation_kind::sigmoid,
                    activation_kind::leaky_relu, activation_kind::elu, activation_kind::gelu})
    if (name == activation_name(kind))
      return kind;
  return std::nullopt;
}

bool needs_input(activation_kind kind) {
  return activation_math::needs_input(kind);
}

// One loop per kind, so that each vectorizes.
void activate(activation_kind kind, const float* z, float* y, size_t count) {
  switch (kind) {
  case activation_kind::none:
    std::copy_n(z, count, y);
    return;
  case activation_kind::relu:
    for (size_t i = 0; i < count; ++i)
      y[i] = z[i] > 0.0f ? z[i] : 0.0f;
    return;
  case activation_kind::leaky_relu:
    for (size_t i = 0; i < count; ++i)
      y[i] = z[i] > 0.0f ? z[i] : leaky_slope * z[i];
    return;
  default:
    for (size_t i = 0; i < count; ++i)
      y[i] = apply(kind, z[i]);
  }
}

void activation_backward(activation_kind kind, const float* z, const float* y,
                         const float* dy, float* dz, size_t count) {
  switch (kind) {
  case activation_kind::none:
    std::copy_n(dy, count, dz);
    return;
  case activation_kind::relu:
    for (size_t i = 0; i < count; ++i)
      dz[i] = y[i] > 0.0f ? dy[i] : 0.0f;
    return;
  case activation_kind::leaky_relu:
    for (size_t i = 0; i < count; ++i)
      dz[i] = y[i] > 0.0f ? dy[i] : dy[i] * leaky_slope;
    return;
  default:
    for (size_t i = 0; i < count; ++i)
      dz[i] = dy[i] * slope(kind, z != nullptr ? z[i] : 0.0f, y[i]);
  }
}

} // namespace troupe::detail
