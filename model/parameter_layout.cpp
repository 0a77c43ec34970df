// The flat parameter layout and Keras-style initialisation.
#include "model/parameter_layout.hpp"

#include <cmath>

#include "model/random.hpp"

namespace troupe::detail {

parameter_layout::parameter_layout(const model_spec& spec) {
  int in = spec.inputs;
  for (const auto& layer : spec.layers) {
    dense_view view;
    view.in = in;
    view.out = layer.units;
    view.weights_offset = size_;
    size_ += static_cast<size_t>(in) * layer.units;
    view.bias_offset = size_;
    size_ += static_cast<size_t>(layer.units);
    layers_.push_back(view);
    in = layer.units;
  }
}

std::vector<float> glorot_uniform_parameters(const parameter_layout& layout,
                                             uint64_t seed) {
  std::vector<float> params(layout.size(), 0.0f);
  random_stream random(mix_seed(seed, 0x6c6f7267)); // "glor"
  for (const auto& layer : layout.layers()) {
    const float limit = std::sqrt(6.0f / static_cast<float>(layer.in + layer.out));
    float* weights = params.data() + layer.weights_offset;
    const size_t count = static_cast<size_t>(layer.in) * layer.out;
    for (size_t i = 0; i < count; ++i)
      weights[i] = (2.0f * random.unit_float() - 1.0f) * limit;
  }
  return params;
}

} // namespace troupe::detail
