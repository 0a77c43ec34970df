// Which built-in layers have a CUDA twin, and the twin of each.
#include "model/backend/cuda/layers/cuda_layer.cuh"
#include "model/backend/cuda/layers/cuda_layer_factories.cuh"

namespace troupe::detail::cuda_detail {

std::unique_ptr<cuda_layer> make_cuda_layer(const layer_spec& l, tensor_shape in,
                                            const cuda_context& context) {
  switch (l.kind) {
  case layer_kind::conv2d:
    return make_cuda_conv2d(l, in, context);
  case layer_kind::max_pool2d:
    return make_cuda_max_pool2d(in, l.kernel, context);
  case layer_kind::average_pool2d:
    return make_cuda_average_pool2d(in, l.kernel, l.kernel, context);
  case layer_kind::global_average_pool2d:
    return make_cuda_average_pool2d(in, in.height, in.width, context);
  case layer_kind::flatten:
    return make_cuda_flatten(in, context);
  case layer_kind::dropout:
    return make_cuda_dropout(in, l.rate, context);
  case layer_kind::activation:
    return make_cuda_activation(in, l.act, context);
  case layer_kind::layer_normalization:
    return make_cuda_layer_normalization(in, context);
  case layer_kind::batch_normalization:
    return make_cuda_batch_normalization(in, context);
  case layer_kind::dense:
    return make_cuda_dense(in, l.units, l.act, context);
  default:
    return nullptr;
  }
}

} // namespace troupe::detail::cuda_detail
