// The constructors of each CUDA twin, one per source file, for
// cuda_layer_factory.cu.
#pragma once

#include <memory>

#include "model/backend/cuda/layers/cuda_layer.cuh"

namespace troupe::detail::cuda_detail {

std::unique_ptr<cuda_layer> make_cuda_conv2d(const layer_spec& l, tensor_shape in,
                                             const cuda_context& context);
std::unique_ptr<cuda_layer> make_cuda_max_pool2d(tensor_shape in, int pool,
                                                 const cuda_context& context);
/// Averages P x P windows; pool_height x pool_width = the input's: global.
std::unique_ptr<cuda_layer> make_cuda_average_pool2d(tensor_shape in, int pool_height,
                                                     int pool_width,
                                                     const cuda_context& context);
std::unique_ptr<cuda_layer> make_cuda_flatten(tensor_shape in, const cuda_context& context);
std::unique_ptr<cuda_layer> make_cuda_dropout(tensor_shape in, float rate,
                                              const cuda_context& context);
std::unique_ptr<cuda_layer> make_cuda_activation(tensor_shape in, activation_kind act,
                                                 const cuda_context& context);
std::unique_ptr<cuda_layer> make_cuda_batch_normalization(tensor_shape in,
                                                          const cuda_context& context);
std::unique_ptr<cuda_layer> make_cuda_layer_normalization(tensor_shape in,
                                                          const cuda_context& context);
std::unique_ptr<cuda_layer> make_cuda_dense(tensor_shape in, int units, activation_kind act,
                                            const cuda_context& context);

} // namespace troupe::detail::cuda_detail
