// Opening and closing the device a stack of layers runs on.
#include "model/backend/cuda/cuda_device_context.cuh"

namespace troupe::detail::cuda_detail {

namespace {

// cuBLAS's recommended workspace on Hopper.
constexpr size_t blas_workspace_bytes = size_t{32} << 20;

error device_failure(std::string message) {
  return fail(errc::device, std::move(message));
}

// Says why device `index` cannot be used (no driver, no device, an index out
// of range), or nothing.
std::string refuse_device(int index) {
  int count = 0;
  cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    (void) cudaGetLastError();
    int runtime = 0;
    (void) cudaRuntimeGetVersion(&runtime); // works without a driver
    return "cudaGetDeviceCount failed under CUDA runtime " + std::to_string(runtime / 1000) + "."
           + std::to_string(runtime % 1000 / 10) + ": " + cudaGetErrorString(status);
  }
  if (count == 0)
    return "the CUDA driver reports no device";
  if (index < 0 || index >= count)
    return "cuda:" + std::to_string(index) + " is out of range: this machine has "
           + std::to_string(count) + " CUDA device" + (count == 1 ? "" : "s") + " (cuda:0 to cuda:"
           + std::to_string(count - 1) + ")";
  return {};
}

// A cuBLAS handle on `stream` with `workspace`, or its failure.
cublasStatus_t create_blas(cudaStream_t stream, void* workspace, cublasHandle_t& blas) {
  cublasStatus_t status = cublasCreate(&blas);
  if (status != CUBLAS_STATUS_SUCCESS)
    return status;
  status = cublasSetStream(blas, stream);
  // cublasSetStream resets the workspace, so it is set after.
  if (status == CUBLAS_STATUS_SUCCESS)
    status = cublasSetWorkspace(blas, workspace, blas_workspace_bytes);
  if (status != CUBLAS_STATUS_SUCCESS)
    (void) cublasDestroy(blas);
  return status;
}

} // namespace

owned_cuda_context::~owned_cuda_context() {
  make_current();
  TROUPE_CUBLAS_CHECK(cublasDestroy(context_.blas));
  TROUPE_CUDA_CHECK(cudaFree(workspace_));
  TROUPE_CUDA_CHECK(cudaStreamDestroy(context_.stream));
}

expected<std::unique_ptr<owned_cuda_context>> open_cuda_context(int device_index) {
  if (auto refused = refuse_device(device_index); !refused.empty())
    return device_failure(refused);
  const std::string where = " on cuda:" + std::to_string(device_index) + ": ";
  cudaError_t status = cudaSetDevice(device_index);
  if (status != cudaSuccess) {
    (void) cudaGetLastError();
    return device_failure("cudaSetDevice failed" + where + cudaGetErrorString(status));
  }
  cuda_context context;
  context.device = device_index;
  // Non-blocking: the stream does not wait for work on the legacy default stream.
  status = cudaStreamCreateWithFlags(&context.stream, cudaStreamNonBlocking);
  if (status != cudaSuccess)
    return device_failure("cudaStreamCreateWithFlags failed" + where
                          + cudaGetErrorString(status));
  void* workspace = nullptr;
  if ((status = cudaMalloc(&workspace, blas_workspace_bytes)) != cudaSuccess) {
    (void) cudaGetLastError();
    (void) cudaStreamDestroy(context.stream);
    return device_failure("cannot allocate the cuBLAS workspace" + where
                          + cudaGetErrorString(status));
  }
  if (cublasStatus_t blas = create_blas(context.stream, workspace, context.blas);
      blas != CUBLAS_STATUS_SUCCESS) {
    (void) cudaFree(workspace);
    (void) cudaStreamDestroy(context.stream);
    return device_failure("cuBLAS setup failed" + where + cublasGetStatusString(blas));
  }
  return std::make_unique<owned_cuda_context>(context, workspace);
}

} // namespace troupe::detail::cuda_detail
