// The forward pass of network (network.cpp) over chunks of rows, and the
// row-wise softmax and argmax that turn logits into answers.
#include "model/predict.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "model/backend/cpu/eigen_backend.hpp"
#include "model/flush_denormals.hpp"
#include "model/parameter_layout.hpp"

namespace troupe::detail {

void predict_logits(const model_spec& spec, const float* params, const float* features,
                    size_t count, float* logits_out) {
  if (count == 0 || spec.layers.empty())
    return;
  // Training flushes denormals too; without it the bits could differ.
  flush_denormals_scope flush;
  auto compute = make_eigen_backend();
  const parameter_layout layout(spec);
  const size_t chunk = std::min(count, predict_chunk_rows);
  int widest = 0;
  for (const auto& layer : spec.layers)
    widest = std::max(widest, layer.units);
  const size_t width = static_cast<size_t>(widest);
  // Two buffers taking turns as a layer's input and output.
  device_array<float> buffers[2] = {device_array<float>(*compute, chunk * width),
                                    device_array<float>(*compute, chunk * width)};
  const size_t inputs = static_cast<size_t>(spec.inputs);
  const size_t classes = static_cast<size_t>(spec.classes());
  for (size_t begin = 0; begin < count; begin += chunk) {
    const size_t rows = std::min(chunk, count - begin);
    const float* x = features + begin * inputs;
    float* y = nullptr;
    for (size_t l = 0; l < layout.layers().size(); ++l) {
      const auto& view = layout.layers()[l];
      y = buffers[l % 2].data();
      // x: (rows, in), w: (in, out), y: (rows, out)
      compute->gemm(false, false, static_cast<int>(rows), view.out, view.in, 1.0f, x,
                    params + view.weights_offset, 0.0f, y);
      compute->bias_activation(y, params + view.bias_offset, static_cast<int>(rows),
                               view.out, spec.layers[l].act);
      x = y;
    }
    std::memcpy(logits_out + begin * classes, y, rows * classes * sizeof(float));
  }
}

void softmax_rows(float* values, size_t rows, int classes) {
  const size_t width = static_cast<size_t>(std::max(classes, 0));
  for (size_t r = 0; r < rows && width > 0; ++r) {
    float* row = values + r * width;
    const float largest = *std::max_element(row, row + width);
    double sum = 0;
    for (size_t c = 0; c < width; ++c) {
      row[c] = std::exp(row[c] - largest);
      sum += row[c];
    }
    const auto scale = static_cast<float>(1.0 / sum);
    for (size_t c = 0; c < width; ++c)
      row[c] *= scale;
  }
}

std::vector<int32_t> argmax_rows(const float* values, size_t rows, int classes) {
  std::vector<int32_t> best(rows, 0);
  if (classes <= 0)
    return best;
  const size_t width = static_cast<size_t>(classes);
  for (size_t r = 0; r < rows; ++r) {
    const float* row = values + r * width;
    best[r] = static_cast<int32_t>(std::max_element(row, row + width) - row);
  }
  return best;
}

} // namespace troupe::detail
