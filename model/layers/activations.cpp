// The activations and their derivatives, value by value.
#include "model/layers/activations.hpp"

#include <algorithm>
#include <cmath>

namespace troupe {

namespace {

constexpr float leaky_slope = 0.2f; // Keras 3's LeakyReLU and leaky_relu

float gelu(float z) {
  return 0.5f * z * (1.0f + std::erf(z * static_cast<float>(M_SQRT1_2)));
}

float gelu_slope(float z) {
  const float cdf = 0.5f * (1.0f + std::erf(z * static_cast<float>(M_SQRT1_2)));
  const float pdf = std::exp(-0.5f * z * z) * static_cast<float>(0.5 * M_2_SQRTPI * M_SQRT1_2);
  return cdf + z * pdf;
}

float apply(activation_kind kind, float z) {
  switch (kind) {
  case activation_kind::none:
    return z;
  case activation_kind::relu:
    return z > 0.0f ? z : 0.0f;
  case activation_kind::tanh:
    return std::tanh(z);
  case activation_kind::sigmoid:
    return 1.0f / (1.0f + std::exp(-z));
  case activation_kind::leaky_relu:
    return z > 0.0f ? z : leaky_slope * z;
  case activation_kind::elu:
    return z > 0.0f ? z : std::expm1(z);
  case activation_kind::gelu:
    return gelu(z);
  }
  return z;
}

// f'(z), from y = f(z) except for gelu.
float slope(activation_kind kind, float z, float y) {
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
  case activation_kind::gelu:
    return gelu_slope(z);
  }
  return 1.0f;
}

} // namespace

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
  return kind == activation_kind::gelu;
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

} // namespace troupe
