// The built-in layers of a layered model, each a layer_op: a 2-D
// convolution (valid padding) through im2col on Troupe's GEMM, max pooling,
// flatten, dropout keyed by sample, and dense layers. Each computes in one
// fixed order, so the same inputs give the same bits on every CPU of a GEMM
// kernel family.
#pragma once

#include <memory>

#include "model/layers/activations.hpp"
#include "model/layers/layer.hpp"

namespace troupe::detail {

/// Returns a conv2d of `filters` K x K kernels with stride `stride` over
/// `in`, valid padding or, with `same`, TensorFlow's same padding (zeros,
/// the smaller half before), `act` after it; Glorot-uniform kernels,
/// zero biases, as Keras's Conv2D. Parameters: kernel (K, K, in channels,
/// filters), then bias (filters).
std::unique_ptr<layer_op> make_conv2d(tensor_shape in, int filters, int kernel, int stride,
                                      bool same, activation_kind act);

/// Returns the height (or width) a conv2d leaves of `in`: (in - K) / S + 1
/// with valid padding, ceil(in / S) with same.
int conv2d_output_side(int in, int kernel, int stride, bool same);

/// Returns a P x P max pool with stride P (the remainder rows and columns
/// dropped, as Keras's valid padding); a tie goes to the first in row order.
std::unique_ptr<layer_op> make_max_pool2d(tensor_shape in, int pool);

/// Returns a P x P average pool with stride P, valid padding.
std::unique_ptr<layer_op> make_average_pool2d(tensor_shape in, int pool);

/// Returns the mean of each channel over the whole height and width.
std::unique_ptr<layer_op> make_global_average_pool2d(tensor_shape in);

/// Returns `act` as a layer of its own (Keras's Activation).
std::unique_ptr<layer_op> make_activation(tensor_shape in, activation_kind act);

/// Returns layer normalization over the last axis (each position's channels),
/// epsilon 1e-3, with a scale gamma (ones) and an offset beta (zeros) per
/// channel, as Keras's LayerNormalization. Parameters: gamma, then beta.
std::unique_ptr<layer_op> make_layer_normalization(tensor_shape in);

/// Returns batch normalization over the last axis, epsilon 1e-3, momentum
/// 0.99, as Keras's BatchNormalization: in training by the batch's
/// statistics per channel, in evaluation by the moving ones. Parameters:
/// gamma (ones), beta (zeros), then the state: moving mean (zeros) and
/// moving variance (ones), each per channel.
std::unique_ptr<layer_op> make_batch_normalization(tensor_shape in);

/// Returns the flatten of `in`: the values as they are, as one vector.
std::unique_ptr<layer_op> make_flatten(tensor_shape in);

/// Returns dropout of `rate`: in training each value is zeroed with
/// probability `rate` and the others scaled by 1 / (1 - rate), its draw
/// keyed by the run's seed, the step, the sample's index and the value's
/// place; the identity otherwise.
std::unique_ptr<layer_op> make_dropout(tensor_shape in, float rate);

/// Returns a dense layer of `units` over the flat `in`, `act` after it.
/// Parameters: kernel (inputs, units), then bias (units).
std::unique_ptr<layer_op> make_dense(tensor_shape in, int units, activation_kind act);

/// Writes `count` Glorot-uniform values (limit sqrt(6 / (fan_in + fan_out)))
/// drawn from `seed`.
void glorot_uniform(uint64_t seed, size_t fan_in, size_t fan_out, float* out, size_t count);

} // namespace troupe::detail
