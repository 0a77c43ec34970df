// Where each layer's weights and bias live in the one flat parameter buffer.
// Gradients use the same layout, so one gradient is one flat vector.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "model/model_spec.hpp"

namespace troupe::detail {

/// Locates one dense layer inside the flat buffer.
/// weights: (in, out) row-major, as a Keras kernel; bias: (out).
struct dense_view {
  int in = 0;
  int out = 0;
  size_t weights_offset = 0;
  size_t bias_offset = 0;
};

/// Lays out every layer's parameters back to back: w0, b0, w1, b1, ...
class parameter_layout {
public:
  explicit parameter_layout(const model_spec& spec);

  const std::vector<dense_view>& layers() const { return layers_; }
  size_t size() const { return size_; }

private:
  std::vector<dense_view> layers_;
  size_t size_ = 0;
};

/// Fills a flat buffer as Keras does: Glorot-uniform kernels with limit
/// sqrt(6 / (fan_in + fan_out)), zero biases, drawn from `seed`.
std::vector<float> glorot_uniform_parameters(const parameter_layout& layout,
                                             uint64_t seed);

} // namespace troupe::detail
