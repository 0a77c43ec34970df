// The CUDA twins of the built-in layers (model/layers/layer_ops.hpp): the
// device and stream they run on, the interface each implements over device
// pointers, and their factory. Internal to troupe_cuda.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "model/backend/cuda/cuda_check.hpp"
#include "model/backend/cuda/cuda_device_context.cuh"
#include "model/layers/cuda_twins.hpp"
#include "model/layers/layer_spec.hpp"

namespace troupe::detail::cuda_detail {

/// Returns how many blocks of `threads` threads cover `count` values, a
/// thread each.
inline unsigned blocks_for(size_t count, int threads) {
  return static_cast<unsigned>((count + threads - 1) / threads);
}

/// Says where a batch's samples came from, as pass_keys does, with the
/// sample indices in device memory.
struct device_pass_keys {
  uint64_t seed = 0;
  uint64_t step = 0;
  const uint32_t* indices = nullptr; // device; null: each sample's row
  bool training = false;
};

/// Holds a device array that only grows; its contents are scratch.
template <class T>
class device_buffer {
public:
  device_buffer() = default;
  ~device_buffer() {
    if (data_ != nullptr)
      (void) cudaFree(data_);
  }
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;

  /// Returns room for at least `count` values (the old ones lost on growth).
  T* reserve(size_t count) {
    if (count > capacity_) {
      if (data_ != nullptr)
        TROUPE_CUDA_CHECK(cudaFree(data_));
      data_ = nullptr;
      TROUPE_CUDA_CHECK(cudaMalloc(&data_, count * sizeof(T)));
      capacity_ = count;
    }
    return data_;
  }
  T* get() const { return data_; }

private:
  T* data_ = nullptr;
  size_t capacity_ = 0;
};

/// Computes one layer on the device, as its CPU op does, over device
/// pointers (parameters, x, y, dy, dx, dparameters). Launches are queued on
/// the context's stream; nothing synchronizes. Every sum runs in a fixed
/// order, so the same inputs give the same bits on the same device.
class cuda_layer {
public:
  virtual ~cuda_layer() = default;
  virtual tensor_shape output_shape() const = 0;
  virtual size_t parameter_count() const { return 0; }
  virtual void forward(const float* parameters, const float* x, float* y, size_t count,
                       const device_pass_keys& keys) = 0;
  /// Overwrites dparameters; leaves dx alone when it is null.
  virtual void backward(const float* parameters, const float* x, const float* y,
                        const float* dy, float* dx, float* dparameters, size_t count,
                        const device_pass_keys& keys) = 0;
};


/// Returns the CUDA twin of `l` over input shape `in`, or null when it has none.
std::unique_ptr<cuda_layer> make_cuda_layer(const layer_spec& l, tensor_shape in,
                                            const cuda_context& context);

} // namespace troupe::detail::cuda_detail
