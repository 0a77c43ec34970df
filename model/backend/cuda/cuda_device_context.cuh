// Opens one CUDA device, for the backend and for a stack of layers: its
// stream, and a cuBLAS handle bound to that stream with a workspace of its
// own (so cuBLAS never allocates while a step is recorded into a graph).
#pragma once

#include <memory>
#include <string>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "common/expected.hpp"
#include "model/backend/cuda/cuda_check.hpp"

namespace troupe::detail::cuda_detail {

/// Names the device, stream and cuBLAS handle (bound to that stream) a
/// backend or a stack's layers run on; one stream, so every launch is ordered.
struct cuda_context {
  int device = 0;
  cudaStream_t stream = nullptr;
  cublasHandle_t blas = nullptr;
};

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

} // namespace troupe::detail::cuda_detail
