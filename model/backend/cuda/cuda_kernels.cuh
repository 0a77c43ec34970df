// Launchers for the CUDA backend's elementwise and per-row kernels. Each queues
// its kernel on `stream` and checks the launch; none allocates or synchronizes.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

#include "model/backend/backend.hpp"
#include "model/backend/resident_ops.hpp"

namespace troupe::detail::cuda_detail {

/// y[r][c] = act(y[r][c] + bias[c]); y: (rows, cols), bias: (cols).
void launch_bias_activation(cudaStream_t stream, float* y, const float* bias,
                            int rows, int cols, activation act);

/// dy[i] *= relu'(y[i]), where y is the ReLU's output; count elements.
void launch_relu_backward(cudaStream_t stream, float* dy, const float* y,
                          size_t count);

/// db[c] = sum over r of dy[r][c]; dy: (rows, cols), db: (cols).
void launch_bias_gradient(cudaStream_t stream, const float* dy, int rows,
                          int cols, float* db);

/// Per row of logits (rows, classes): adds the loss and the hit to stats[0]
/// and stats[1]; writes (softmax - onehot) * scale to dlogits unless null.
void launch_softmax_cross_entropy(cudaStream_t stream, const float* logits,
                                  const int32_t* labels, int rows, int classes,
                                  float scale, float* dlogits, float* stats);

/// One Adam step over `count` weights with the backend interface's formula.
void launch_adam_update(cudaStream_t stream, float* weights,
                        const float* gradient, float* m, float* v, size_t count,
                        const adam_coefficients& c);

/// The terms one weighted_sum launch adds; more are added by further
/// launches that start from the partial sum (1 x it is exact).
constexpr size_t weighted_sum_terms_per_launch = 8;

/// out[i] = sum over t < terms of weights[t] * gradients[t][i], in order,
/// each product and sum rounded on its own (never fused): the CPU's bits
/// except for denormals. With `accumulate` the sum starts from out[i].
void launch_weighted_sum(cudaStream_t stream, const float* const* gradients,
                         const float* weights, size_t terms, size_t count, bool accumulate,
                         float* out);

/// One Adam step whose gradient is launch_weighted_sum's, summed inside the
/// step's loop (at most weighted_sum_terms_per_launch terms).
void launch_adam_update_sum(cudaStream_t stream, float* weights,
                            const float* const* gradients, const float* gradient_weights,
                            size_t terms, float* m, float* v, size_t count,
                            const adam_coefficients& c);

/// Sets *flag to 1 if any of `count` values is NaN or infinite (else leaves it).
void launch_flag_non_finite(cudaStream_t stream, const float* values, size_t count,
                            float* flag);

/// Copies rows order[counters->cursor + r], r < rows, of inputs (n, features)
/// and labels (n) into inputs_out and labels_out.
void launch_gather_rows(cudaStream_t stream, const float* inputs,
                        const int32_t* labels, int features, const uint32_t* order,
                        const step_counters* counters, int rows, float* inputs_out,
                        int32_t* labels_out);

/// counters->cursor += rows; counters->steps += 1 (one thread).
void launch_advance_step(cudaStream_t stream, step_counters* counters, int rows);

/// Adam with t = counters->steps read on the device.
void launch_adam_update_counted(cudaStream_t stream, float* weights,
                                const float* gradient, float* m, float* v,
                                size_t count, const adam_hyperparameters& h,
                                const step_counters* counters);

} // namespace troupe::detail::cuda_detail
