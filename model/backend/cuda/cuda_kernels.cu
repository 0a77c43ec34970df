// The CUDA backend's kernels: bias + activation, ReLU derivative, bias-gradient
// column sums, softmax cross-entropy with its stats, and Adam. Each mirrors the
// CPU (Eigen) backend, which is the reference.
#include "model/backend/cuda/cuda_kernels.cuh"

#include <algorithm>
#include <climits>
#include <cmath>

#include "model/backend/cuda/cuda_check.hpp"

namespace troupe::detail::cuda_detail {

namespace {

constexpr int elementwise_threads = 256;
// Enough blocks to fill an H200 several times over; larger arrays are covered
// by the grid-stride loops.
constexpr size_t max_elementwise_blocks = 4096;

unsigned elementwise_blocks(size_t count) {
  size_t blocks = (count + elementwise_threads - 1) / elementwise_threads;
  return static_cast<unsigned>(std::min(blocks, max_elementwise_blocks));
}

template <bool relu>
__global__ void bias_activation_kernel(float* y, const float* bias, int cols,
                                       size_t count) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < count;
       i += size_t{gridDim.x} * blockDim.x) {
    float value = y[i] + bias[i % cols];
    y[i] = relu ? fmaxf(value, 0.0f) : value;
  }
}

__global__ void relu_backward_kernel(float* dy, const float* y, size_t count) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < count;
       i += size_t{gridDim.x} * blockDim.x)
    if (!(y[i] > 0.0f))
      dy[i] = 0.0f;
}

// A (32, 16) block sums 32 columns: each row of threads takes every 16th row
// of dy (reads stay coalesced along a row), then one thread per column adds
// the 16 partial sums in a fixed order, so the result is deterministic.
constexpr int column_tile = 32;
constexpr int row_lanes = 16;

__global__ void bias_gradient_kernel(const float* dy, int rows, int cols,
                                     float* db) {
  __shared__ float partial[row_lanes][column_tile + 1];
  int col = blockIdx.x * column_tile + threadIdx.x;
  float sum = 0.0f;
  if (col < cols)
    for (int r = threadIdx.y; r < rows; r += row_lanes)
      sum += dy[static_cast<size_t>(r) * cols + col];
  partial[threadIdx.y][threadIdx.x] = sum;
  __syncthreads();
  if (threadIdx.y == 0 && col < cols) {
    float total = 0.0f;
    for (int j = 0; j < row_lanes; ++j)
      total += partial[j][threadIdx.x];
    db[col] = total;
  }
}

constexpr int warp_size = 32;
constexpr int rows_per_block = 8; // one warp per row

// One warp per row of logits. The max (and argmax, first max winning as on the
// CPU) keeps exp() from overflowing: loss = log(sum exp(z - max)) + max - z[label].
__global__ void softmax_cross_entropy_kernel(const float* logits,
                                             const int32_t* labels, int rows,
                                             int classes, float scale,
                                             float* dlogits, float* stats) {
  __shared__ float row_loss[rows_per_block];
  __shared__ float row_hit[rows_per_block];
  const unsigned all = 0xffffffffu;
  int warp = threadIdx.x / warp_size;
  int lane = threadIdx.x % warp_size;
  int row = blockIdx.x * rows_per_block + warp;
  float loss = 0.0f;
  float hit = 0.0f;
  if (row < rows) {
    const float* z = logits + static_cast<size_t>(row) * classes;
    float best = -INFINITY;
    int best_index = INT_MAX;
    for (int c = lane; c < classes; c += warp_size)
      if (z[c] > best) {
        best = z[c];
        best_index = c;
      }
    for (int offset = warp_size / 2; offset > 0; offset /= 2) {
      float other = __shfl_xor_sync(all, best, offset);
      int other_index = __shfl_xor_sync(all, best_index, offset);
      if (other > best || (other == best && other_index < best_index)) {
        best = other;
        best_index = other_index;
      }
    }
    float sum = 0.0f;
    for (int c = lane; c < classes; c += warp_size)
      sum += expf(z[c] - best);
    for (int offset = warp_size / 2; offset > 0; offset /= 2)
      sum += __shfl_xor_sync(all, sum, offset);
    int label = labels[row];
    if (dlogits != nullptr) {
      float* dz = dlogits + static_cast<size_t>(row) * classes;
      float inverse_sum = 1.0f / sum;
      for (int c = lane; c < classes; c += warp_size) {
        float p = expf(z[c] - best) * inverse_sum;
        dz[c] = (p - (c == label ? 1.0f : 0.0f)) * scale;
      }
    }
    loss = logf(sum) + best - z[label];
    hit = best_index == label ? 1.0f : 0.0f;
  }
  if (lane == 0) {
    row_loss[warp] = loss;
    row_hit[warp] = hit;
  }
  __syncthreads();
  // One atomic pair per block rather than per row.
  if (threadIdx.x == 0) {
    float block_loss = 0.0f;
    float block_hits = 0.0f;
    for (int w = 0; w < rows_per_block; ++w) {
      block_loss += row_loss[w];
      block_hits += row_hit[w];
    }
    atomicAdd(&stats[0], block_loss);
    atomicAdd(&stats[1], block_hits);
  }
}

__device__ void adam_loop(float* weights, const float* gradient, float* m,
                          float* v, size_t count, float alpha, float beta1,
                          float beta2, float epsilon) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < count;
       i += size_t{gridDim.x} * blockDim.x) {
    float g = gradient[i];
    // nvcc fuses one product of each moment update into an FMA, which the CPU
    // (-ffp-contract=off) does not: tests/cuda/adam_drift_bound.cpp bounds the
    // difference. Unfused (__fmul_rn/__fadd_rn) these would match the CPU bitwise.
    float mi = beta1 * m[i] + (1.0f - beta1) * g;
    float vi = beta2 * v[i] + (1.0f - beta2) * g * g;
    m[i] = mi;
    v[i] = vi;
    weights[i] -= alpha * mi / (sqrtf(vi) + epsilon);
  }
}

__global__ void adam_kernel(float* weights, const float* gradient, float* m,
                            float* v, size_t count, float alpha, float beta1,
                            float beta2, float epsilon, const float* skip_if) {
  if (skip_if != nullptr && *skip_if != 0.0f)
    return;
  adam_loop(weights, gradient, m, v, count, alpha, beta1, beta2, epsilon);
}

// The step size is derived once per block, in double as on the host
// (adam_step_coefficients), from the step count the device holds.
__global__ void adam_counted_kernel(float* weights, const float* gradient,
                                    float* m, float* v, size_t count,
                                    adam_hyperparameters h,
                                    const step_counters* counters) {
  __shared__ float alpha;
  if (threadIdx.x == 0) {
    const double t = static_cast<double>(counters->steps);
    const double correction = sqrt(1.0 - pow(static_cast<double>(h.beta2), t))
                              / (1.0 - pow(static_cast<double>(h.beta1), t));
    alpha = static_cast<float>(h.learning_rate * correction);
  }
  __syncthreads();
  adam_loop(weights, gradient, m, v, count, alpha, h.beta1, h.beta2, h.epsilon);
}

__global__ void gather_rows_kernel(const float* inputs, const int32_t* labels,
                                   int features, const uint32_t* order,
                                   const step_counters* counters, int rows,
                                   float* inputs_out, int32_t* labels_out) {
  const uint32_t* indices = order + counters->cursor;
  const size_t count = static_cast<size_t>(rows) * features;
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < count;
       i += size_t{gridDim.x} * blockDim.x) {
    const size_t row = i / features;
    inputs_out[i] = inputs[size_t{indices[row]} * features + i % features];
    if (i < static_cast<size_t>(rows))
      labels_out[i] = labels[indices[i]];
  }
}

struct weighted_terms {
  const float* gradients[weighted_sum_terms_per_launch];
  float weights[weighted_sum_terms_per_launch];
};

// The terms as one kernel argument (terms <= weighted_sum_terms_per_launch).
weighted_terms pack_terms(const float* const* gradients, const float* weights, size_t terms) {
  weighted_terms packed{};
  for (size_t t = 0; t < terms; ++t) {
    packed.gradients[t] = gradients[t];
    packed.weights[t] = weights[t];
  }
  return packed;
}

__global__ void weighted_sum_kernel(weighted_terms terms, int count_terms, size_t count,
                                    bool accumulate, float* out) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < count;
       i += size_t{gridDim.x} * blockDim.x) {
    float sum = accumulate ? out[i] : __fmul_rn(terms.weights[0], terms.gradients[0][i]);
    for (int t = accumulate ? 0 : 1; t < count_terms; ++t)
      sum = __fadd_rn(sum, __fmul_rn(terms.weights[t], terms.gradients[t][i]));
    out[i] = sum;
  }
}

// adam_loop's step on the sum weighted_sum_kernel computes, in one pass. The
// sum's operations are rounded one by one; the moments read as adam_loop's.
__global__ void adam_sum_kernel(float* weights, weighted_terms terms, int count_terms,
                                float* m, float* v, size_t count, float alpha, float beta1,
                                float beta2, float epsilon, const float* skip_if) {
  if (skip_if != nullptr && *skip_if != 0.0f)
    return;
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < count;
       i += size_t{gridDim.x} * blockDim.x) {
    float g = __fmul_rn(terms.weights[0], terms.gradients[0][i]);
    for (int t = 1; t < count_terms; ++t)
      g = __fadd_rn(g, __fmul_rn(terms.weights[t], terms.gradients[t][i]));
    float mi = beta1 * m[i] + (1.0f - beta1) * g;
    float vi = beta2 * v[i] + (1.0f - beta2) * g * g;
    m[i] = mi;
    v[i] = vi;
    weights[i] -= alpha * mi / (sqrtf(vi) + epsilon);
  }
}

__global__ void flag_non_finite_kernel(const float* values, size_t count, float* flag) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < count;
       i += size_t{gridDim.x} * blockDim.x)
    if (!isfinite(values[i]))
      *flag = 1.0f; // every writer stores the same value
}

__global__ void advance_step_kernel(step_counters* counters, int rows) {
  counters->cursor += rows;
  counters->steps += 1;
}

} // namespace

void launch_bias_activation(cudaStream_t stream, float* y, const float* bias,
                            int rows, int cols, activation act) {
  size_t count = static_cast<size_t>(rows) * cols;
  if (count == 0)
    return;
  if (act == activation::relu)
    bias_activation_kernel<true>
      <<<elementwise_blocks(count), elementwise_threads, 0, stream>>>(y, bias, cols, count);
  else
    bias_activation_kernel<false>
      <<<elementwise_blocks(count), elementwise_threads, 0, stream>>>(y, bias, cols, count);
  TROUPE_CUDA_CHECK_LAUNCH("bias_activation_kernel");
}

void launch_relu_backward(cudaStream_t stream, float* dy, const float* y,
                          size_t count) {
  if (count == 0)
    return;
  relu_backward_kernel<<<elementwise_blocks(count), elementwise_threads, 0, stream>>>(
    dy, y, count);
  TROUPE_CUDA_CHECK_LAUNCH("relu_backward_kernel");
}

void launch_bias_gradient(cudaStream_t stream, const float* dy, int rows,
                          int cols, float* db) {
  if (cols <= 0)
    return;
  dim3 block(column_tile, row_lanes);
  dim3 grid((cols + column_tile - 1) / column_tile);
  bias_gradient_kernel<<<grid, block, 0, stream>>>(dy, rows, cols, db);
  TROUPE_CUDA_CHECK_LAUNCH("bias_gradient_kernel");
}

void launch_softmax_cross_entropy(cudaStream_t stream, const float* logits,
                                  const int32_t* labels, int rows, int classes,
                                  float scale, float* dlogits, float* stats) {
  if (rows <= 0 || classes <= 0)
    return;
  unsigned blocks = (rows + rows_per_block - 1) / rows_per_block;
  softmax_cross_entropy_kernel<<<blocks, rows_per_block * warp_size, 0, stream>>>(
    logits, labels, rows, classes, scale, dlogits, stats);
  TROUPE_CUDA_CHECK_LAUNCH("softmax_cross_entropy_kernel");
}

void launch_adam_update(cudaStream_t stream, float* weights,
                        const float* gradient, float* m, float* v, size_t count,
                        const adam_coefficients& c) {
  if (count == 0)
    return;
  adam_kernel<<<elementwise_blocks(count), elementwise_threads, 0, stream>>>(
    weights, gradient, m, v, count, c.alpha, c.beta1, c.beta2, c.epsilon, c.skip_if);
  TROUPE_CUDA_CHECK_LAUNCH("adam_kernel");
}

void launch_adam_update_counted(cudaStream_t stream, float* weights,
                                const float* gradient, float* m, float* v,
                                size_t count, const adam_hyperparameters& h,
                                const step_counters* counters) {
  if (count == 0)
    return;
  adam_counted_kernel<<<elementwise_blocks(count), elementwise_threads, 0, stream>>>(
    weights, gradient, m, v, count, h, counters);
  TROUPE_CUDA_CHECK_LAUNCH("adam_counted_kernel");
}

void launch_weighted_sum(cudaStream_t stream, const float* const* gradients,
                         const float* weights, size_t terms, size_t count, bool accumulate,
                         float* out) {
  if (count == 0 || terms == 0 || terms > weighted_sum_terms_per_launch)
    return;
  weighted_sum_kernel<<<elementwise_blocks(count), elementwise_threads, 0, stream>>>(
    pack_terms(gradients, weights, terms), static_cast<int>(terms), count, accumulate, out);
  TROUPE_CUDA_CHECK_LAUNCH("weighted_sum_kernel");
}

void launch_adam_update_sum(cudaStream_t stream, float* weights,
                            const float* const* gradients, const float* gradient_weights,
                            size_t terms, float* m, float* v, size_t count,
                            const adam_coefficients& c) {
  if (count == 0 || terms == 0 || terms > weighted_sum_terms_per_launch)
    return;
  adam_sum_kernel<<<elementwise_blocks(count), elementwise_threads, 0, stream>>>(
    weights, pack_terms(gradients, gradient_weights, terms), static_cast<int>(terms), m, v,
    count, c.alpha, c.beta1, c.beta2, c.epsilon, c.skip_if);
  TROUPE_CUDA_CHECK_LAUNCH("adam_sum_kernel");
}

void launch_flag_non_finite(cudaStream_t stream, const float* values, size_t count,
                            float* flag) {
  if (count == 0)
    return;
  flag_non_finite_kernel<<<elementwise_blocks(count), elementwise_threads, 0, stream>>>(
    values, count, flag);
  TROUPE_CUDA_CHECK_LAUNCH("flag_non_finite_kernel");
}

void launch_gather_rows(cudaStream_t stream, const float* inputs,
                        const int32_t* labels, int features, const uint32_t* order,
                        const step_counters* counters, int rows, float* inputs_out,
                        int32_t* labels_out) {
  const size_t count = static_cast<size_t>(rows) * features;
  if (rows <= 0 || features <= 0)
    return;
  gather_rows_kernel<<<elementwise_blocks(count), elementwise_threads, 0, stream>>>(
    inputs, labels, features, order, counters, rows, inputs_out, labels_out);
  TROUPE_CUDA_CHECK_LAUNCH("gather_rows_kernel");
}

void launch_advance_step(cudaStream_t stream, step_counters* counters, int rows) {
  advance_step_kernel<<<1, 1, 0, stream>>>(counters, rows);
  TROUPE_CUDA_CHECK_LAUNCH("advance_step_kernel");
}

} // namespace troupe::detail::cuda_detail
