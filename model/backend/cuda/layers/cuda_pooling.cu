// The CUDA twins of max pooling and (global) average pooling. The windows
// never overlap (stride = pool), so backward is a gather with no atomics:
// each input value takes its one window's gradient, or 0.
#include "model/backend/cuda/layers/cuda_layer.cuh"
#include "model/backend/cuda/layers/cuda_layer_factories.cuh"

namespace troupe::detail::cuda_detail {

namespace {

constexpr int threads = 256;

struct pool_geometry {
  int in_height, in_width, channels;
  int pool_height, pool_width;
  int out_height, out_width;

  __host__ __device__ size_t in_size() const {
    return static_cast<size_t>(in_height) * in_width * channels;
  }
  __host__ __device__ size_t out_size() const {
    return static_cast<size_t>(out_height) * out_width * channels;
  }
  __device__ size_t at(size_t n, int row, int column, int channel) const {
    return n * in_size() + (static_cast<size_t>(row) * in_width + column) * channels + channel;
  }
};

// The input index of output o's largest value; a tie goes to the first in
// row order, as the CPU's strict comparison leaves it.
__device__ size_t window_winner(const pool_geometry& g, const float* x, size_t o) {
  const size_t n = o / g.out_size();
  const int rest = static_cast<int>(o % g.out_size());
  const int c = rest % g.channels;
  const int oy = rest / g.channels / g.out_width;
  const int ox = rest / g.channels % g.out_width;
  size_t best = g.at(n, oy * g.pool_height, ox * g.pool_width, c);
  for (int ky = 0; ky < g.pool_height; ++ky)
    for (int kx = 0; kx < g.pool_width; ++kx) {
      const size_t i = g.at(n, oy * g.pool_height + ky, ox * g.pool_width + kx, c);
      if (x[i] > x[best])
        best = i;
    }
  return best;
}

// The output whose window holds input i, or -1 (a dropped remainder row or column).
__device__ long long window_of(const pool_geometry& g, size_t i) {
  const size_t n = i / g.in_size();
  const int rest = static_cast<int>(i % g.in_size());
  const int c = rest % g.channels;
  const int oy = rest / g.channels / g.in_width / g.pool_height;
  const int ox = rest / g.channels % g.in_width / g.pool_width;
  if (oy >= g.out_height || ox >= g.out_width)
    return -1;
  return static_cast<long long>(n * g.out_size() +
                                (static_cast<size_t>(oy) * g.out_width + ox) * g.channels + c);
}

__global__ void max_pool_kernel(pool_geometry g, const float* x, float* y, size_t outputs) {
  const size_t o = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (o < outputs)
    y[o] = x[window_winner(g, x, o)];
}

__global__ void max_pool_backward_kernel(pool_geometry g, const float* x, const float* dy,
                                         float* dx, size_t inputs) {
  const size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i >= inputs)
    return;
  const long long o = window_of(g, i);
  dx[i] = o >= 0 && window_winner(g, x, static_cast<size_t>(o)) == i ? dy[o] : 0.0f;
}

__global__ void average_pool_kernel(pool_geometry g, const float* x, float* y, size_t outputs,
                                    float share) {
  const size_t o = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (o >= outputs)
    return;
  const size_t n = o / g.out_size();
  const int rest = static_cast<int>(o % g.out_size());
  const int c = rest % g.channels;
  const int oy = rest / g.channels / g.out_width;
  const int ox = rest / g.channels % g.out_width;
  float sum = 0.0f;
  for (int ky = 0; ky < g.pool_height; ++ky)
    for (int kx = 0; kx < g.pool_width; ++kx)
      sum += x[g.at(n, oy * g.pool_height + ky, ox * g.pool_width + kx, c)];
  y[o] = sum * share;
}

__global__ void average_pool_backward_kernel(pool_geometry g, const float* dy, float* dx,
                                             size_t inputs, float share) {
  const size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i >= inputs)
    return;
  const long long o = window_of(g, i);
  dx[i] = o >= 0 ? dy[o] * share : 0.0f;
}

class cuda_pool final : public cuda_layer {
public:
  cuda_pool(tensor_shape in, int pool_height, int pool_width, bool max,
            const cuda_context& context)
    : context_(context), max_(max),
      geometry_{in.height, in.width, in.channels, pool_height, pool_width,
                in.height / pool_height, in.width / pool_width},
      share_(1.0f / static_cast<float>(pool_height * pool_width)) {}

  tensor_shape output_shape() const override {
    return tensor_shape{geometry_.out_height, geometry_.out_width, geometry_.channels};
  }

  void forward(const float*, const float* x, float* y, size_t count,
               const device_pass_keys&) override {
    const size_t outputs = count * geometry_.out_size();
    if (outputs == 0)
      return;
    if (max_)
      max_pool_kernel<<<blocks_for(outputs, threads), threads, 0, context_.stream>>>(
        geometry_, x, y, outputs);
    else
      average_pool_kernel<<<blocks_for(outputs, threads), threads, 0, context_.stream>>>(
        geometry_, x, y, outputs, share_);
    TROUPE_CUDA_CHECK_LAUNCH("pool forward kernel");
  }

  void backward(const float*, const float* x, const float*, const float* dy, float* dx, float*,
                size_t count, const device_pass_keys&) override {
    const size_t inputs = count * geometry_.in_size();
    if (dx == nullptr || inputs == 0)
      return;
    if (max_)
      max_pool_backward_kernel<<<blocks_for(inputs, threads), threads, 0, context_.stream>>>(
        geometry_, x, dy, dx, inputs);
    else
      average_pool_backward_kernel<<<blocks_for(inputs, threads), threads, 0, context_.stream>>>(
        geometry_, dy, dx, inputs, share_);
    TROUPE_CUDA_CHECK_LAUNCH("pool backward kernel");
  }

private:
  cuda_context context_;
  bool max_;
  pool_geometry geometry_;
  float share_;
};

} // namespace

std::unique_ptr<cuda_layer> make_cuda_max_pool2d(tensor_shape in, int pool,
                                                 const cuda_context& context) {
  return std::make_unique<cuda_pool>(in, pool, pool, true, context);
}

std::unique_ptr<cuda_layer> make_cuda_average_pool2d(tensor_shape in, int pool_height,
                                                     int pool_width,
                                                     const cuda_context& context) {
  return std::make_unique<cuda_pool>(in, pool_height, pool_width, false, context);
}

} // namespace troupe::detail::cuda_detail
