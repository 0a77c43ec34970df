// The CUDA twin of layer normalization: one thread per position normalizes
// its channels in double, as the CPU does; gamma's and beta's gradients are
// column sums over the positions, in a fixed order.
#include <cmath>

#include "model/backend/cuda/layers/cuda_layer.cuh"
#include "model/backend/cuda/layers/cuda_layer_factories.cuh"
#include "model/backend/cuda/layers/cuda_layer_kernels.cuh"

namespace troupe::detail::cuda_detail {

namespace {

constexpr int threads = 128;
constexpr float layer_norm_epsilon = 1e-3f; // as normalization.cpp

// x, y, xhat: (groups, width); inverse: (groups)
__global__ void normalize_kernel(const float* x, const float* gamma, const float* beta,
                                 size_t groups, int width, float* xhat, float* inverse,
                                 float* y) {
  const size_t g = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (g >= groups)
    return;
  const float* in = x + g * width;
  double mean = 0, variance = 0;
  for (int c = 0; c < width; ++c)
    mean += in[c];
  mean /= static_cast<double>(width);
  for (int c = 0; c < width; ++c)
    variance += (in[c] - mean) * (in[c] - mean);
  variance /= static_cast<double>(width);
  const float inv =
    static_cast<float>(1.0 / sqrt(variance + static_cast<double>(layer_norm_epsilon)));
  inverse[g] = inv;
  for (int c = 0; c < width; ++c) {
    const float h = static_cast<float>(in[c] - mean) * inv;
    xhat[g * width + c] = h;
    y[g * width + c] = gamma[c] * h + beta[c];
  }
}

__global__ void normalize_backward_kernel(const float* dy, const float* gamma,
                                          const float* xhat, const float* inverse,
                                          size_t groups, int width, float* dx) {
  const size_t g = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (g >= groups)
    return;
  const float* d = dy + g * width;
  const float* h = xhat + g * width;
  double sum = 0, dot = 0; // of dxhat, and of dxhat * xhat
  for (int c = 0; c < width; ++c) {
    const float dxhat = d[c] * gamma[c];
    sum += dxhat;
    dot += static_cast<double>(dxhat) * h[c];
  }
  const double n = static_cast<double>(width);
  for (int c = 0; c < width; ++c) {
    const double dxhat = static_cast<double>(d[c]) * gamma[c];
    dx[g * width + c] = static_cast<float>(inverse[g] / n * (n * dxhat - sum - h[c] * dot));
  }
}

class cuda_layer_normalization final : public cuda_layer {
public:
  cuda_layer_normalization(tensor_shape in, const cuda_context& context)
    : context_(context), shape_(in) {}

  tensor_shape output_shape() const override { return shape_; }
  size_t parameter_count() const override { return 2 * static_cast<size_t>(width()); }

  void forward(const float* parameters, const float* x, float* y, size_t count,
               const device_pass_keys&) override {
    const size_t groups = count * shape_.size() / width();
    if (groups == 0)
      return;
    normalize_kernel<<<blocks_for(groups, threads), threads, 0, context_.stream>>>(
      x, parameters, parameters + width(), groups, width(), normalized_.reserve(groups * width()),
      inverse_deviation_.reserve(groups), y);
    TROUPE_CUDA_CHECK_LAUNCH("normalize_kernel");
  }

  void backward(const float* parameters, const float*, const float*, const float* dy,
                float* dx, float* dparameters, size_t count, const device_pass_keys&) override {
    const size_t groups = count * shape_.size() / width();
    float* products = products_.reserve(groups * width());
    launch_multiply(context_.stream, dy, normalized_.get(), products, groups * width());
    launch_column_sums(context_.stream, products, groups, width(), dparameters);
    launch_column_sums(context_.stream, dy, groups, width(), dparameters + width());
    if (dx == nullptr || groups == 0)
      return;
    normalize_backward_kernel<<<blocks_for(groups, threads), threads, 0, context_.stream>>>(
      dy, parameters, normalized_.get(), inverse_deviation_.get(), groups, width(), dx);
    TROUPE_CUDA_CHECK_LAUNCH("normalize_backward_kernel");
  }

private:
  int width() const { return shape_.channels; }

  cuda_context context_;
  tensor_shape shape_;
  device_buffer<float> normalized_;        // of the last forward pass: x hat
  device_buffer<float> inverse_deviation_; // 1 / sqrt(variance + epsilon) per group
  device_buffer<float> products_;          // dy * x hat, for gamma's gradient
};

} // namespace

std::unique_ptr<cuda_layer> make_cuda_layer_normalization(tensor_shape in,
                                                          const cuda_context& context) {
  return std::make_unique<cuda_layer_normalization>(in, context);
}

} // namespace troupe::detail::cuda_detail
