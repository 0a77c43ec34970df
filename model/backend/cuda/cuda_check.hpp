// Checks for CUDA runtime and cuBLAS calls inside the backend's ops, where a
// failure is a broken invariant: print file:line, the call and why, then abort.
#pragma once

#include <cstdio>
#include <cstdlib>

#include <cublas_v2.h>
#include <cuda_runtime.h>

namespace troupe::detail::cuda_detail {

[[noreturn]] inline void cuda_failed(const char* what, const char* why,
                                     const char* file, int line) {
  std::fprintf(stderr, "%s:%d: %s failed: %s\n", file, line, what, why);
  std::fflush(stderr);
  std::abort();
}

inline void check_cuda(cudaError_t status, const char* what, const char* file,
                       int line) {
  if (status != cudaSuccess)
    cuda_failed(what, cudaGetErrorString(status), file, line);
}

inline void check_cublas(cublasStatus_t status, const char* what,
                         const char* file, int line) {
  if (status != CUBLAS_STATUS_SUCCESS)
    cuda_failed(what, cublasGetStatusString(status), file, line);
}

} // namespace troupe::detail::cuda_detail

/// Aborts with file:line, the call and the CUDA error string unless it succeeded.
#define TROUPE_CUDA_CHECK(call)                                                \
  ::troupe::detail::cuda_detail::check_cuda((call), #call, __FILE__, __LINE__)

/// Aborts with file:line, the call and the cuBLAS status unless it succeeded.
#define TROUPE_CUBLAS_CHECK(call)                                              \
  ::troupe::detail::cuda_detail::check_cublas((call), #call, __FILE__, __LINE__)

/// Checks the kernel launch just made (bad configuration, no kernel image);
/// errors inside the kernel surface at the next synchronizing call.
#define TROUPE_CUDA_CHECK_LAUNCH(kernel_name)                                  \
  ::troupe::detail::cuda_detail::check_cuda(cudaGetLastError(), "launch of " kernel_name, \
                                    __FILE__, __LINE__)
