// Launchers for the kernels the layers' twins share: activations, the bias,
// per-channel sums in a fixed order, dropout and the softmax cross-entropy.
// Each queues its kernel on `stream` and checks the launch.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

#include "model/layers/activation_math.hpp"
#include "model/layers/activations.hpp"

namespace troupe::detail::cuda_detail {

/// Tells whether act's backward reads its input z.
constexpr bool backward_reads_input(activation_kind act) {
  return activation_math::needs_input(act);
}

/// y[i] = act(z[i]) for `count` values (y may be z).
void launch_activate(cudaStream_t stream, activation_kind act, const float* z, float* y,
                     size_t count);

/// dz[i] = dy[i] * act'(z[i]) from y = act(z); z may be null unless the
/// activation needs it (gelu); dz may be dy.
void launch_activation_backward(cudaStream_t stream, activation_kind act, const float* z,
                                const float* y, const float* dy, float* dz, size_t count);

/// y[r][c] = act(y[r][c] + bias[c]), with z[r][c] = y[r][c] + bias[c] kept
/// when z is not null; y, z: (rows, cols), bias: (cols).
void launch_add_bias_activate(cudaStream_t stream, activation_kind act, float* y, float* z,
                              const float* bias, size_t rows, int cols);

/// sums[c] = the sum over r of values[r][c]; values: (rows, cols). One block
/// per column: each thread adds a fixed stride of rows in order, then a
/// fixed tree adds the threads' sums, so the bits never vary.
void launch_column_sums(cudaStream_t stream, const float* values, size_t rows, int cols,
                        float* sums);

/// out[i] = a[i] * b[i] for `count` values.
void launch_multiply(cudaStream_t stream, const float* a, const float* b, float* out,
                     size_t count);

/// Dropout over `count` samples of `size` values: y = x * scale where the
/// value is kept (model/layers/dropout_mask.hpp), else 0.
void launch_dropout(cudaStream_t stream, const float* x, float* y, size_t count, size_t size,
                    uint64_t seed, uint64_t step, const uint32_t* indices, float rate,
                    float scale);

/// Per row of logits (rows, classes): probabilities, the loss and whether
/// the first largest logit is the label, computed in double as the CPU does.
/// Writes loss[r] and hit[r]; with dlogits, (softmax - onehot) * scale.
void launch_softmax_rows(cudaStream_t stream, const float* logits, const int32_t* labels,
                         size_t rows, int classes, float scale, float* probabilities,
                         float* dlogits, double* loss, int32_t* hit);

} // namespace troupe::detail::cuda_detail
