// The kernels the layers' twins share. The activations are the CPU's
// (model/layers/activation_math.hpp); CUDA's erf, exp, tanh and expm1 may
// differ from the host's in the last bits.
#include "model/backend/cuda/layers/cuda_layer_kernels.cuh"

#include <cmath>

#include "model/backend/cuda/cuda_check.hpp"
#include "model/backend/cuda/layers/cuda_layer.cuh"
#include "model/layers/activation_math.hpp"
#include "model/layers/dropout_mask.hpp"

namespace troupe::detail::cuda_detail {

namespace {

using activation_math::apply;
using activation_math::leaky_slope;
using activation_math::slope;

constexpr int threads = 256;

__global__ void activate_kernel(activation_kind kind, const float* z, float* y, size_t count) {
  const size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i < count)
    y[i] = apply(kind, z[i]);
}

__global__ void activation_backward_kernel(activation_kind kind, const float* z,
                                           const float* y, const float* dy, float* dz,
                                           size_t count) {
  const size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i >= count)
    return;
  // relu and leaky_relu as the CPU's own loops: dy passed on, or scaled.
  if (kind == activation_kind::relu)
    dz[i] = y[i] > 0.0f ? dy[i] : 0.0f;
  else if (kind == activation_kind::leaky_relu)
    dz[i] = y[i] > 0.0f ? dy[i] : dy[i] * leaky_slope;
  else
    dz[i] = dy[i] * slope(kind, z != nullptr ? z[i] : 0.0f, y[i]);
}

__global__ void add_bias_activate_kernel(activation_kind kind, float* y, float* z,
                                         const float* bias, size_t rows, int cols) {
  const size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i >= rows * cols)
    return;
  const float v = y[i] + bias[i % cols];
  if (z != nullptr)
    z[i] = v;
  y[i] = apply(kind, v);
}

__global__ void column_sums_kernel(const float* values, size_t rows, int cols, float* sums) {
  __shared__ float partial[threads];
  const int c = blockIdx.x;
  float sum = 0.0f;
  for (size_t r = threadIdx.x; r < rows; r += threads)
    sum += values[r * cols + c];
  partial[threadIdx.x] = sum;
  __syncthreads();
  for (int half = threads / 2; half > 0; half /= 2) {
    if (static_cast<int>(threadIdx.x) < half)
      partial[threadIdx.x] += partial[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0)
    sums[c] = partial[0];
}

__global__ void multiply_kernel(const float* a, const float* b, float* out, size_t count) {
  const size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i < count)
    out[i] = a[i] * b[i];
}

__global__ void dropout_kernel(const float* x, float* y, size_t count, size_t size,
                               uint64_t seed, uint64_t step, const uint32_t* indices,
                               float rate, float scale) {
  const size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i >= count * size)
    return;
  const size_t n = i / size;
  const uint64_t index = indices != nullptr ? indices[n] : n;
  const uint64_t sample = dropout_mask::sample_seed(seed, step, index);
  y[i] = dropout_mask::kept(sample, i % size, rate) ? x[i] * scale : 0.0f;
}

// One thread per row, in double as the CPU's softmax_rows.
__global__ void softmax_rows_kernel(const float* logits, const int32_t* labels, size_t rows,
                                    int classes, float scale, float* probabilities,
                                    float* dlogits, double* loss, int32_t* hit) {
  const size_t n = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (n >= rows)
    return;
  const float* row = logits + n * classes;
  int top = 0;
  for (int k = 1; k < classes; ++k)
    if (row[k] > row[top])
      top = k;
  double sum = 0;
  for (int k = 0; k < classes; ++k)
    sum += exp(static_cast<double>(row[k]) - row[top]);
  for (int k = 0; k < classes; ++k) {
    const float p = static_cast<float>(exp(static_cast<double>(row[k]) - row[top]) / sum);
    if (probabilities != nullptr)
      probabilities[n * classes + k] = p;
    if (dlogits != nullptr)
      dlogits[n * classes + k] = ((k == labels[n]) ? p - 1.0f : p) * scale;
  }
  if (labels == nullptr)
    return;
  loss[n] = log(sum) + row[top] - row[labels[n]];
  hit[n] = top == labels[n] ? 1 : 0;
}

} // namespace

void launch_activate(cudaStream_t stream, activation_kind act, const float* z, float* y,
                     size_t count) {
  if (count == 0)
    return;
  activate_kernel<<<blocks_for(count, threads), threads, 0, stream>>>(act, z, y, count);
  TROUPE_CUDA_CHECK_LAUNCH("activate_kernel");
}

void launch_activation_backward(cudaStream_t stream, activation_kind act, const float* z,
                                const float* y, const float* dy, float* dz, size_t count) {
  if (count == 0)
    return;
  activation_backward_kernel<<<blocks_for(count, threads), threads, 0, stream>>>(
    act, z, y, dy, dz, count);
  TROUPE_CUDA_CHECK_LAUNCH("activation_backward_kernel");
}

void launch_add_bias_activate(cudaStream_t stream, activation_kind act, float* y, float* z,
                              const float* bias, size_t rows, int cols) {
  if (rows == 0 || cols == 0)
    return;
  add_bias_activate_kernel<<<blocks_for(rows * cols, threads), threads, 0, stream>>>(
    act, y, z, bias, rows, cols);
  TROUPE_CUDA_CHECK_LAUNCH("add_bias_activate_kernel");
}

void launch_column_sums(cudaStream_t stream, const float* values, size_t rows, int cols,
                        float* sums) {
  if (cols == 0)
    return;
  column_sums_kernel<<<static_cast<unsigned>(cols), threads, 0, stream>>>(values, rows, cols,
                                                                          sums);
  TROUPE_CUDA_CHECK_LAUNCH("column_sums_kernel");
}

void launch_multiply(cudaStream_t stream, const float* a, const float* b, float* out,
                     size_t count) {
  if (count == 0)
    return;
  multiply_kernel<<<blocks_for(count, threads), threads, 0, stream>>>(a, b, out, count);
  TROUPE_CUDA_CHECK_LAUNCH("multiply_kernel");
}

void launch_dropout(cudaStream_t stream, const float* x, float* y, size_t count, size_t size,
                    uint64_t seed, uint64_t step, const uint32_t* indices, float rate,
                    float scale) {
  if (count * size == 0)
    return;
  dropout_kernel<<<blocks_for(count * size, threads), threads, 0, stream>>>(
    x, y, count, size, seed, step, indices, rate, scale);
  TROUPE_CUDA_CHECK_LAUNCH("dropout_kernel");
}

void launch_softmax_rows(cudaStream_t stream, const float* logits, const int32_t* labels,
                         size_t rows, int classes, float scale, float* probabilities,
                         float* dlogits, double* loss, int32_t* hit) {
  if (rows == 0)
    return;
  softmax_rows_kernel<<<blocks_for(rows, threads), threads, 0, stream>>>(
    logits, labels, rows, classes, scale, probabilities, dlogits, loss, hit);
  TROUPE_CUDA_CHECK_LAUNCH("softmax_rows_kernel");
}

} // namespace troupe::detail::cuda_detail
