// Which built-in layers have a CUDA twin (model/backend/cuda/layers/): one
// list, read by the CUDA module and by the host, which refuses a stack
// before a run starts without loading the module.
#pragma once

#include "model/layers/layer_spec.hpp"

namespace troupe::detail {

/// Tells whether the layers of `kind` have a CUDA twin.
inline bool has_cuda_twin(layer_kind kind) {
  switch (kind) {
  case layer_kind::conv2d:
  case layer_kind::max_pool2d:
  case layer_kind::average_pool2d:
  case layer_kind::global_average_pool2d:
  case layer_kind::flatten:
  case layer_kind::dropout:
  case layer_kind::activation:
  case layer_kind::layer_normalization:
  case layer_kind::batch_normalization:
  case layer_kind::dense:
    return true;
  default: // a registered layer of one's own
    return false;
  }
}

} // namespace troupe::detail
