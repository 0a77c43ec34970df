// Opening and closing the device a stack of layers runs on.
#include "model/backend/cuda/layers/cuda_device_context.cuh"

namespace troupe::cuda_detail {

namespace {

constexpr size_t blas_workspace_bytes = size_t{32} << 20; // as the backend's

error device_failure(int index, const std::string& why) {
  return fail(errc::device, "device cuda:" + std::to_string(index) + ": " + why);
}

} // namespace

owned_cuda_context::~owned_cuda_context() {
  make_current();
  TROUPE_CUBLAS_CHECK(cublasDestroy(context_.blas));
  TROUPE_CUDA_CHECK(cudaFree(workspace_));
  TROUPE_CUDA_CHECK(cudaStreamDestroy(context_.stream));
}

expected<std::unique_ptr<owned_cuda_context>> open_cuda_context(int device_index) {
  int count = 0;
  cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    (void) cudaGetLastError();
    return device_failure(device_index, std::string("cudaGetDeviceCount failed: ") +
                                          cudaGetErrorString(status));
  }
  if (device_index < 0 || device_index >= count)
    return device_failure(device_index, "the CUDA driver reports " + std::to_string(count) +
                                          " device(s)");
  if ((status = cudaSetDevice(device_index)) != cudaSuccess) {
    (void) cudaGetLastError();
    return device_failure(device_index, cudaGetErrorString(status));
  }
  cuda_context context;
  context.device = device_index;
  if ((status = cudaStreamCreateWithFlags(&context.stream, cudaStreamNonBlocking)) != cudaSuccess)
    return device_failure(device_index, cudaGetErrorString(status));
  void* workspace = nullptr;
  if ((status = cudaMalloc(&workspace, blas_workspace_bytes)) != cudaSuccess) {
    (void) cudaGetLastError();
    (void) cudaStreamDestroy(context.stream);
    return device_failure(device_index, cudaGetErrorString(status));
  }
  cublasStatus_t blas = cublasCreate(&context.blas);
  if (blas == CUBLAS_STATUS_SUCCESS) {
    blas = cublasSetStream(context.blas, context.stream);
    if (blas == CUBLAS_STATUS_SUCCESS)
      blas = cublasSetWorkspace(context.blas, workspace, blas_workspace_bytes);
    if (blas != CUBLAS_STATUS_SUCCESS)
      (void) cublasDestroy(context.blas);
  }
  if (blas != CUBLAS_STATUS_SUCCESS) {
    (void) cudaFree(workspace);
    (void) cudaStreamDestroy(context.stream);
    return device_failure(device_index, std::string("cuBLAS: ") + cublasGetStatusString(blas));
  }
  return std::make_unique<owned_cuda_context>(context, workspace);
}

} // namespace troupe::cuda_detail
