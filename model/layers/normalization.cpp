// Layer normalization, as Keras's LayerNormalization over the last axis:
// each position's channels (a flat vector's values) to mean 0 and variance
// 1, then scaled by gamma and shifted by beta, per channel.
#include <algorithm>
#include <cmath>
#include <vector>

#include "model/layers/layer_ops.hpp"

namespace troupe::detail {

namespace {

constexpr float layer_norm_epsilon = 1e-3f; // Keras's default

class layer_normalization_op final : public layer_op {
public:
  explicit layer_normalization_op(tensor_shape in) : shape_(in) {}

  tensor_shape output_shape() const override { return shape_; }
  size_t parameter_count() const override { return 2 * width(); }

  void initialize(uint64_t, float* parameters) const override {
    std::fill_n(parameters, width(), 1.0f);            // gamma
    std::fill_n(parameters + width(), width(), 0.0f);  // beta
  }

  void forward(const float* parameters, const float* x, float* y, size_t count,
               const pass_keys&) override {
    const size_t groups = count * shape_.size() / width();
    normalized_.resize(groups * width());
    inverse_deviation_.resize(groups);
    const float* gamma = parameters;
    const float* beta = parameters + width();
    for (size_t g = 0; g < groups; ++g) {
      const float* in = x + g * width();
      float* xhat = normalized_.data() + g * width();
      double mean = 0, variance = 0;
      for (size_t c = 0; c < width(); ++c)
        mean += in[c];
      mean /= static_cast<double>(width());
      for (size_t c = 0; c < width(); ++c)
        variance += (in[c] - mean) * (in[c] - mean);
      variance /= static_cast<double>(width());
      const float inverse =
        static_cast<float>(1.0 / std::sqrt(variance + static_cast<double>(layer_norm_epsilon)));
      inverse_deviation_[g] = inverse;
      for (size_t c = 0; c < width(); ++c) {
        xhat[c] = static_cast<float>(in[c] - mean) * inverse;
        y[g * width() + c] = gamma[c] * xhat[c] + beta[c];
      }
    }
  }

  void backward(const float* parameters, const float*, const float*, const float* dy,
                float* dx, float* dparameters, size_t count, const pass_keys&) override {
    const size_t groups = count * shape_.size() / width();
    float* dgamma = dparameters;
    float* dbeta = dparameters + width();
    std::fill_n(dparameters, 2 * width(), 0.0f);
    for (size_t g = 0; g < groups; ++g) {
      const float* xhat = normalized_.data() + g * width();
      const float* d = dy + g * width();
      double sum = 0, dot = 0; // of dxhat, and of dxhat * xhat
      for (size_t c = 0; c < width(); ++c) {
        dgamma[c] += d[c] * xhat[c];
        dbeta[c] += d[c];
        const float dxhat = d[c] * parameters[c];
        sum += dxhat;
        dot += static_cast<double>(dxhat) * xhat[c];
      }
      if (dx == nullptr)
        continue;
      const double n = static_cast<double>(width());
      for (size_t c = 0; c < width(); ++c) {
        const double dxhat = static_cast<double>(d[c]) * parameters[c];
        dx[g * width() + c] = static_cast<float>(inverse_deviation_[g] / n *
                                                 (n * dxhat - sum - xhat[c] * dot));
      }
    }
  }

private:
  size_t width() const { return static_cast<size_t>(shape_.channels); }

  tensor_shape shape_;
  std::vector<float> normalized_;        // of the last forward pass: x hat
  std::vector<float> inverse_deviation_; // 1 / sqrt(variance + epsilon) per group
};

} // namespace

std::unique_ptr<layer_op> make_layer_normalization(tensor_shape in) {
  return std::make_unique<layer_normalization_op>(in);
}

} // namespace troupe::detail
