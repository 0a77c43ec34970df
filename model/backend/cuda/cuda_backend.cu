// The CUDA backend: one device, one stream, one cuBLAS handle. Memory ops and
// gemm live here; the elementwise ops call the kernels in cuda_kernels.cu.
#include "model/backend/cuda/cuda_backend.hpp"

#include <algorithm>
#include <functional>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <utility>

#include "model/backend/cuda/cuda_check.hpp"
#include "model/backend/cuda/cuda_device_context.cuh"
#include "model/backend/cuda/cuda_gemm.cuh"
#include "model/backend/cuda/cuda_kernels.cuh"
#include "model/backend/resident_ops.hpp"

namespace troupe::detail {

namespace {

using cuda_detail::launch_adam_update;
using cuda_detail::launch_adam_update_sum;
using cuda_detail::launch_adam_update_counted;
using cuda_detail::launch_advance_step;
using cuda_detail::launch_flag_non_finite;
using cuda_detail::launch_gather_rows;
using cuda_detail::launch_weighted_sum;
using cuda_detail::weighted_sum_terms_per_launch;
using cuda_detail::launch_bias_activation;
using cuda_detail::launch_bias_gradient;
using cuda_detail::launch_relu_backward;
using cuda_detail::launch_softmax_cross_entropy;

using cuda_detail::row_major_gemm;

error device_failure(std::string message) {
  return fail(errc::device, std::move(message));
}

// One executable CUDA graph, launched on the backend's stream.
class cuda_graph final : public recorded_ops {
public:
  cuda_graph(int device, cudaStream_t stream, cudaGraphExec_t exec)
    : device_(device), stream_(stream), exec_(exec) {}
  ~cuda_graph() override {
    TROUPE_CUDA_CHECK(cudaSetDevice(device_));
    TROUPE_CUDA_CHECK(cudaGraphExecDestroy(exec_));
  }
  cuda_graph(const cuda_graph&) = delete;
  cuda_graph& operator=(const cuda_graph&) = delete;

  void replay() override {
    TROUPE_CUDA_CHECK(cudaSetDevice(device_));
    TROUPE_CUDA_CHECK(cudaGraphLaunch(exec_, stream_));
  }

private:
  int device_;
  cudaStream_t stream_;
  cudaGraphExec_t exec_;
};

// A CUDA event of any device; the stream that waits for it may be another's.
class cuda_event final : public device_event {
public:
  explicit cuda_event(cudaEvent_t event) : event_(event) {}
  ~cuda_event() override { (void) cudaEventDestroy(event_); }
  cuda_event(const cuda_event&) = delete;
  cuda_event& operator=(const cuda_event&) = delete;
  cudaEvent_t get() const { return event_; }
  void wait_host() const override { TROUPE_CUDA_CHECK(cudaEventSynchronize(event_)); }

private:
  cudaEvent_t event_;
};

class cuda_backend final : public backend, public resident_loop_ops {
public:
  explicit cuda_backend(std::unique_ptr<cuda_detail::owned_cuda_context> context)
    : device_(context->get().device), stream_(context->get().stream),
      blas_(context->get().blas), context_(std::move(context)) {}

  ~cuda_backend() override { // the context, freed after, holds the stream and cuBLAS
    make_current();
    if (flag_ != nullptr)
      TROUPE_CUDA_CHECK(cudaFree(flag_));
    if (sum_ != nullptr)
      TROUPE_CUDA_CHECK(cudaFree(sum_));
  }

  std::string name() const override { return "cuda:" + std::to_string(device_); }

  bool host_memory() const override { return false; }

  void* allocate(size_t bytes) override {
    if (bytes == 0)
      return nullptr;
    make_current();
    void* ptr = nullptr;
    cudaError_t status = cudaMalloc(&ptr, bytes);
    if (status == cudaErrorMemoryAllocation) {
      (void) cudaGetLastError(); // clears the error: the device stays usable
      throw std::bad_alloc();
    }
    TROUPE_CUDA_CHECK(status);
    return ptr;
  }

  // Page-locked: copies from and to it run at the bus's speed, without the
  // driver staging them through a buffer of its own.
  void* allocate_host(size_t bytes) override {
    make_current();
    void* ptr = nullptr;
    cudaError_t status = cudaMallocHost(&ptr, std::max<size_t>(bytes, 1));
    if (status == cudaErrorMemoryAllocation) {
      (void) cudaGetLastError();
      throw std::bad_alloc();
    }
    TROUPE_CUDA_CHECK(status);
    return ptr;
  }

  void release_host(void* ptr) noexcept override {
    if (ptr != nullptr)
      TROUPE_CUDA_CHECK(cudaFreeHost(ptr));
  }

  void release(void* ptr) noexcept override {
    if (ptr == nullptr)
      return;
    make_current();
    TROUPE_CUDA_CHECK(cudaFree(ptr));
  }

  // cudaMemcpyDefault lets the runtime tell host from device pointers, so a
  // source already on this device (a resident data set) is copied on the device.
  // A pageable host source is staged before the call returns, so the caller
  // may reuse it at once.
  void copy_to_device(void* dst, const void* src, size_t bytes) override {
    if (bytes == 0)
      return;
    make_current();
    TROUPE_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream_));
  }

  void copy_to_host(void* dst, const void* src, size_t bytes) override {
    make_current();
    if (bytes != 0)
      TROUPE_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream_));
    TROUPE_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  void fill_zero(void* dst, size_t bytes) override {
    if (bytes == 0)
      return;
    make_current();
    TROUPE_CUDA_CHECK(cudaMemsetAsync(dst, 0, bytes, stream_));
  }

  void queue_copy_to_host(void* dst, const void* src, size_t bytes) override {
    if (bytes == 0)
      return;
    make_current();
    TROUPE_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream_));
  }

  void finish() override {
    make_current();
    TROUPE_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  // Launches of up to weighted_sum_terms_per_launch terms; each further one
  // adds to the partial sum, which keeps the terms' order.
  void weighted_sum(const std::vector<weighted_gradient>& terms, size_t count,
                    float* out) override {
    make_current();
    const float* gradients[weighted_sum_terms_per_launch];
    float weights[weighted_sum_terms_per_launch];
    for (size_t first = 0; first < terms.size(); first += weighted_sum_terms_per_launch) {
      const size_t n = std::min(weighted_sum_terms_per_launch, terms.size() - first);
      for (size_t t = 0; t < n; ++t) {
        gradients[t] = terms[first + t].gradient;
        weights[t] = terms[first + t].weight;
      }
      launch_weighted_sum(stream_, gradients, weights, n, count, first > 0, out);
    }
  }

  // One pass when the terms fit one launch (a round of up to 8 replicas);
  // beyond that, all but the last are summed first into a scratch buffer.
  void adam_update_sum(float* weights, const std::vector<weighted_gradient>& terms, float* m,
                       float* v, size_t count, const adam_coefficients& c) override {
    make_current();
    const float* gradients[weighted_sum_terms_per_launch];
    float gradient_weights[weighted_sum_terms_per_launch];
    size_t n = terms.size();
    if (n > weighted_sum_terms_per_launch) {
      if (sum_count_ < count) {
        if (sum_ != nullptr)
          TROUPE_CUDA_CHECK(cudaFree(sum_));
        TROUPE_CUDA_CHECK(cudaMalloc(&sum_, count * sizeof(float)));
        sum_count_ = count;
      }
      weighted_sum(std::vector<weighted_gradient>(terms.begin(), terms.end() - 1), count, sum_);
      gradients[0] = sum_;
      gradient_weights[0] = 1.0f;
      gradients[1] = terms.back().gradient;
      gradient_weights[1] = terms.back().weight;
      n = 2;
    } else {
      for (size_t t = 0; t < n; ++t) {
        gradients[t] = terms[t].gradient;
        gradient_weights[t] = terms[t].weight;
      }
    }
    launch_adam_update_sum(stream_, weights, gradients, gradient_weights, n, m, v, count, c);
  }

  bool has_non_finite(const float* values, size_t count) override {
    make_current();
    if (flag_ == nullptr)
      TROUPE_CUDA_CHECK(cudaMalloc(&flag_, sizeof(float)));
    TROUPE_CUDA_CHECK(cudaMemsetAsync(flag_, 0, sizeof(float), stream_));
    launch_flag_non_finite(stream_, values, count, flag_);
    float found = 0.0f;
    TROUPE_CUDA_CHECK(cudaMemcpyAsync(&found, flag_, sizeof(float), cudaMemcpyDeviceToHost,
                                      stream_));
    TROUPE_CUDA_CHECK(cudaStreamSynchronize(stream_));
    return found != 0.0f;
  }

  void flag_non_finite(const float* values, size_t count, float* flag) override {
    make_current();
    launch_flag_non_finite(stream_, values, count, flag);
  }

  // An event per hand-over: cheap to create, and destroyed once its last
  // holder lets go (CUDA frees it after it fires if it is still pending).
  std::shared_ptr<const device_event> record_event() override {
    make_current();
    cudaEvent_t event = nullptr;
    TROUPE_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
    TROUPE_CUDA_CHECK(cudaEventRecord(event, stream_));
    return std::make_shared<const cuda_event>(event);
  }

  void wait_for(const device_event& event) override {
    const auto* recorded = dynamic_cast<const cuda_event*>(&event);
    if (recorded == nullptr)
      throw std::logic_error(name() + " cannot wait for an event of another kind of device");
    make_current();
    TROUPE_CUDA_CHECK(cudaStreamWaitEvent(stream_, recorded->get(), 0));
  }

  void gemm(bool transpose_a, bool transpose_b, int m, int n, int k, float alpha,
            const float* a, const float* b, float beta, float* c) override {
    if (m <= 0 || n <= 0)
      return;
    make_current();
    row_major_gemm(blas_, transpose_a, transpose_b, m, n, k, alpha, a, b, beta, c);
  }

  void bias_activation(float* y, const float* bias, int rows, int cols,
                       activation act) override {
    make_current();
    launch_bias_activation(stream_, y, bias, rows, cols, act);
  }

  void activation_backward(float* dy, const float* y, size_t count,
                           activation act) override {
    if (act == activation::none)
      return; // the identity's derivative is 1: nothing to launch
    make_current();
    launch_relu_backward(stream_, dy, y, count);
  }

  void bias_gradient(const float* dy, int rows, int cols, float* db) override {
    make_current();
    launch_bias_gradient(stream_, dy, rows, cols, db);
  }

  void softmax_cross_entropy(const float* logits, const int32_t* labels,
                             int rows, int classes, float scale, float* dlogits,
                             float* stats) override {
    make_current();
    launch_softmax_cross_entropy(stream_, logits, labels, rows, classes, scale,
                                 dlogits, stats);
  }

  void adam_update(float* weights, const float* gradient, float* m, float* v,
                   size_t count, const adam_coefficients& c) override {
    make_current();
    launch_adam_update(stream_, weights, gradient, m, v, count, c);
  }

  resident_loop_ops* resident_ops() override { return this; }

  void gather_rows(const float* inputs, const int32_t* labels, int features,
                   const uint32_t* order, const step_counters* counters, int rows,
                   float* inputs_out, int32_t* labels_out) override {
    make_current();
    launch_gather_rows(stream_, inputs, labels, features, order, counters, rows,
                       inputs_out, labels_out);
  }

  void advance_step(step_counters* counters, int rows) override {
    make_current();
    launch_advance_step(stream_, counters, rows);
  }

  void adam_update_counted(float* weights, const float* gradient, float* m, float* v,
                           size_t count, const adam_hyperparameters& h,
                           const step_counters* counters) override {
    make_current();
    launch_adam_update_counted(stream_, weights, gradient, m, v, count, h, counters);
  }

  // Stream capture: the ops queue into a graph instead of running. ThreadLocal
  // mode leaves other threads (other replicas' backends) free meanwhile.
  expected<std::unique_ptr<recorded_ops>> record(std::function<void()> queue_ops) override {
    make_current();
    cudaError_t status = cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal);
    if (status != cudaSuccess)
      return device_failure("cannot record on " + name() + ": cudaStreamBeginCapture: "
                            + cudaGetErrorString(status));
    cudaGraph_t graph = nullptr;
    try {
      queue_ops();
    } catch (...) {
      (void) cudaStreamEndCapture(stream_, &graph);
      if (graph != nullptr)
        (void) cudaGraphDestroy(graph);
      throw;
    }
    status = cudaStreamEndCapture(stream_, &graph);
    if (status != cudaSuccess) {
      (void) cudaGetLastError();
      return device_failure("cannot record on " + name() + ": cudaStreamEndCapture: "
                            + cudaGetErrorString(status));
    }
    cudaGraphExec_t exec = nullptr;
    status = cudaGraphInstantiateWithFlags(&exec, graph, 0); // the same from CUDA 11.4 on
    TROUPE_CUDA_CHECK(cudaGraphDestroy(graph));
    if (status != cudaSuccess) {
      (void) cudaGetLastError();
      return device_failure("cannot record on " + name() + ": cudaGraphInstantiateWithFlags: "
                            + cudaGetErrorString(status));
    }
    return std::unique_ptr<recorded_ops>(new cuda_graph(device_, stream_, exec));
  }

private:
  // The current device is per host thread, and a replica's actor may run on a
  // different scheduler thread at each message; setting it is cheap.
  void make_current() const { TROUPE_CUDA_CHECK(cudaSetDevice(device_)); }

  int device_;
  cudaStream_t stream_;
  cublasHandle_t blas_;
  std::unique_ptr<cuda_detail::owned_cuda_context> context_;
  float* flag_ = nullptr; // has_non_finite's answer, allocated on first use
  float* sum_ = nullptr;  // adam_update_sum's partial sum of many terms
  size_t sum_count_ = 0;
};

} // namespace

expected<std::unique_ptr<backend>> make_cuda_backend(int device_index) {
  auto context = cuda_detail::open_cuda_context(device_index);
  if (!context)
    return context.error();
  return std::unique_ptr<backend>(new cuda_backend(std::move(*context)));
}

} // namespace troupe::detail
