// The CUDA twin of batch normalization: in training one thread per channel
// sums its values over the positions in position order, in double, as the
// CPU does (so the batch's statistics are the CPU's bits); every value is
// then normalized by its own thread. The moving statistics' asked change
// and gamma's and beta's gradients follow the CPU's formulas, the last two
// as column sums in a fixed order.
#include <cmath>

#include "model/backend/cuda/layers/cuda_layer.cuh"
#include "model/backend/cuda/layers/cuda_layer_factories.cuh"
#include "model/backend/cuda/layers/cuda_layer_kernels.cuh"

namespace troupe::detail::cuda_detail {

namespace {

constexpr int threads = 128;
constexpr float batch_norm_epsilon = 1e-3f; // as batch_normalization.cpp
constexpr float batch_norm_momentum = 0.99f;

// Per channel: the mean and biased variance of x (positions, channels), and
// 1 / sqrt(variance + epsilon).
__global__ void batch_statistics_kernel(const float* x, size_t positions, int channels,
                                        float* mean, float* variance, float* inverse) {
  const int k = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (k >= channels)
    return;
  double sum = 0;
  for (size_t p = 0; p < positions; ++p)
    sum += x[p * channels + k];
  const float m = static_cast<float>(sum / static_cast<double>(positions));
  double squares = 0;
  for (size_t p = 0; p < positions; ++p) {
    const double centred = static_cast<double>(x[p * channels + k]) - m;
    squares += centred * centred;
  }
  const double v = squares / static_cast<double>(positions);
  mean[k] = m;
  variance[k] = static_cast<float>(v);
  inverse[k] = static_cast<float>(1.0 / sqrt(v + static_cast<double>(batch_norm_epsilon)));
}

// Per channel, from the moving statistics (evaluation and prediction).
__global__ void moving_statistics_kernel(const float* moving_mean, const float* moving_variance,
                                         int channels, float* mean, float* inverse) {
  const int k = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (k >= channels)
    return;
  mean[k] = moving_mean[k];
  inverse[k] = static_cast<float>(
    1.0 / sqrt(static_cast<double>(moving_variance[k]) + batch_norm_epsilon));
}

__global__ void normalize_kernel(const float* x, const float* gamma, const float* beta,
                                 const float* mean, const float* inverse, size_t values,
                                 int channels, float* xhat, float* y) {
  const size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i >= values)
    return;
  const int k = static_cast<int>(i % channels);
  const float h = (x[i] - mean[k]) * inverse[k];
  xhat[i] = h;
  y[i] = gamma[k] * h + beta[k];
}

// The change asked of the moving statistics: current minus new, per channel.
__global__ void moving_change_kernel(const float* moving, const float* batch, int channels,
                                     float* change) {
  const int k = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (k < channels)
    change[k] = (1.0f - batch_norm_momentum) * (moving[k] - batch[k]);
}

// dx from dy, x hat and the column sums dgamma and dbeta.
__global__ void normalize_backward_kernel(const float* dy, const float* gamma,
                                          const float* xhat, const float* inverse,
                                          const float* dgamma, const float* dbeta,
                                          size_t values, int channels, size_t positions,
                                          float* dx) {
  const size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i >= values)
    return;
  const int k = static_cast<int>(i % channels);
  const double n = static_cast<double>(positions);
  const double scale = static_cast<double>(gamma[k]) * inverse[k] / n;
  dx[i] = static_cast<float>(scale * (n * dy[i] - dbeta[k] - xhat[i] * dgamma[k]));
}

class cuda_batch_normalization final : public cuda_layer {
public:
  cuda_batch_normalization(tensor_shape in, const cuda_context& context)
    : context_(context), shape_(in) {}

  tensor_shape output_shape() const override { return shape_; }
  // gamma, beta, moving mean, moving variance, as the CPU's
  size_t parameter_count() const override { return 4 * channels(); }

  void forward(const float* parameters, const float* x, float* y, size_t count,
               const device_pass_keys& keys) override {
    const size_t values = count * shape_.size();
    const size_t positions = values / channels();
    float* mean = mean_.reserve(channels());
    float* inverse = inverse_.reserve(channels());
    if (keys.training && positions > 0)
      batch_statistics_kernel<<<blocks_for(channels(), threads), threads, 0, context_.stream>>>(
        x, positions, width(), mean, variance_.reserve(channels()), inverse);
    else
      moving_statistics_kernel<<<blocks_for(channels(), threads), threads, 0, context_.stream>>>(
        parameters + 2 * channels(), parameters + 3 * channels(), width(), mean, inverse);
    TROUPE_CUDA_CHECK_LAUNCH("batch normalization statistics");
    if (values == 0)
      return;
    normalize_kernel<<<blocks_for(values, threads), threads, 0, context_.stream>>>(
      x, parameters, parameters + channels(), mean, inverse, values, width(),
      normalized_.reserve(values), y);
    TROUPE_CUDA_CHECK_LAUNCH("normalize_kernel");
  }

  void backward(const float* parameters, const float*, const float*, const float* dy,
                float* dx, float* dparameters, size_t count, const device_pass_keys&) override {
    const size_t values = count * shape_.size();
    const size_t positions = values / channels();
    float* dgamma = dparameters;
    float* dbeta = dparameters + channels();
    float* products = products_.reserve(values);
    launch_multiply(context_.stream, dy, normalized_.get(), products, values);
    launch_column_sums(context_.stream, products, positions, width(), dgamma);
    launch_column_sums(context_.stream, dy, positions, width(), dbeta);
    for (size_t s = 0; s < 2; ++s) // the moving mean, then the moving variance
      moving_change_kernel<<<blocks_for(channels(), threads), threads, 0, context_.stream>>>(
        parameters + (2 + s) * channels(), s == 0 ? mean_.get() : variance_.get(), width(),
        dparameters + (2 + s) * channels());
    TROUPE_CUDA_CHECK_LAUNCH("moving_change_kernel");
    if (dx == nullptr || values == 0)
      return;
    normalize_backward_kernel<<<blocks_for(values, threads), threads, 0, context_.stream>>>(
      dy, parameters, normalized_.get(), inverse_.get(), dgamma, dbeta, values, width(), positions,
      dx);
    TROUPE_CUDA_CHECK_LAUNCH("normalize_backward_kernel");
  }

private:
  size_t channels() const { return static_cast<size_t>(shape_.channels); }
  int width() const { return shape_.channels; }

  cuda_context context_;
  tensor_shape shape_;
  // Of the last forward pass: per channel, and x hat per value.
  device_buffer<float> mean_, variance_, inverse_;
  device_buffer<float> normalized_;
  device_buffer<float> products_; // dy * x hat, for gamma's gradient
};

} // namespace

std::unique_ptr<cuda_layer> make_cuda_batch_normalization(tensor_shape in,
                                                          const cuda_context& context) {
  return std::make_unique<cuda_batch_normalization>(in, context);
}

} // namespace troupe::detail::cuda_detail
