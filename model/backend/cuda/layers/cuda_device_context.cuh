// Opens one CUDA device for a stack of layers: its stream, and a cuBLAS
// handle bound to that stream with a workspace of its own.
#pragma once

#include <memory>
#include <string>

#include "common/expected.hpp"
#include "model/backend/cuda/layers/cuda_layer.cuh"

namespace troupe::cuda_detail {

/// Owns a device's stream, cuBLAS handle and workspace; frees them when it goes.
class owned_cuda_context {
public:
  explicit owned_cuda_context(cuda_context context, void* workspace)
    : context_(context), workspace_(workspace) {}
  ~owned_cuda_context();
  owned_cuda_context(const owned_cuda_context&) = delete;
  owned_cuda_context& operator=(const owned_cuda_context&) = delete;

  const cuda_context& get() const { return context_; }
  /// Makes this context's device the calling thread's current one.
  void make_current() const { TROUPE_CUDA_CHECK(cudaSetDevice(context_.device)); }

private:
  cuda_context context_;
  void* workspace_;
};

/// Opens device `device_index`, or says why it cannot (no driver, no
/// device, an index out of range) as a errc::device.
expected<std::unique_ptr<owned_cuda_context>> open_cuda_context(int device_index);

} // namespace troupe::cuda_detail
