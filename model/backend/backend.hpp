// The compute backend interface: memory where the backend computes, and the
// heavy ops of a dense network's step. The CPU (Eigen) backend is the
// reference; the CUDA backend implements the same ops on a GPU. The ops of the
// device-resident training loop are a second interface (resident_ops.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/expected.hpp"
#include "model/model_spec.hpp"
#include "model/backend/adam_coefficients.hpp"
#include "model/backend/weighted_sum.hpp"

namespace troupe::detail {

class resident_loop_ops;

/// Marks a point in one backend's queue of ops: another backend on a device
/// of the same kind can queue its ops behind it (backend::wait_for) without
/// the host waiting.
class device_event {
public:
  virtual ~device_event() = default;
  /// Makes the host wait until the event has fired.
  virtual void wait_host() const = 0;
};

/// Computes the ops of a training step on one device. All pointers passed to
/// ops point into memory from this backend's allocate(). Matrices are
/// row-major. Ops may run asynchronously; copy_to_host waits for them.
class backend {
public:
  virtual ~backend() = default;

  /// Names the device: "cpu", "cuda:0".
  virtual std::string name() const = 0;

  /// Tells whether allocate() returns plain host memory (then callers may
  /// skip copies and hand host buffers to the ops directly).
  virtual bool host_memory() const = 0;

  // --- memory ---------------------------------------------------------------
  virtual void* allocate(size_t bytes) = 0;
  virtual void release(void* ptr) noexcept = 0;
  virtual void copy_to_device(void* dst, const void* src, size_t bytes) = 0;
  /// Copies to the host once every op queued before has finished.
  virtual void copy_to_host(void* dst, const void* src, size_t bytes) = 0;
  virtual void fill_zero(void* dst, size_t bytes) = 0;
  /// Queues a copy into page-locked host memory (allocate_host) without the
  /// host waiting: dst holds the values once an event recorded after this
  /// call has fired. By default copy_to_host.
  virtual void queue_copy_to_host(void* dst, const void* src, size_t bytes);
  /// Allocates host memory this backend copies to and from fastest
  /// (page-locked on a GPU), freed by release_host. By default plain host
  /// memory, 64-byte aligned.
  virtual void* allocate_host(size_t bytes);
  virtual void release_host(void* ptr) noexcept;
  /// Waits until every op queued before has finished, so that another
  /// backend on the same device may read what they wrote. The CPU computes
  /// on the calling thread: nothing to wait for.
  virtual void finish() {}
  /// Returns an event that fires once every op queued so far has finished;
  /// null where ops have finished when they return (the CPU).
  virtual std::shared_ptr<const device_event> record_event() { return nullptr; }
  /// Makes the ops queued from now on wait for `event`, recorded by any
  /// backend of this kind, without the host waiting.
  virtual void wait_for(const device_event& event) { (void) event; }

  // --- ops ------------------------------------------------------------------
  /// c = alpha * op(a) * op(b) + beta * c, with op(a): (m, k), op(b): (k, n),
  /// c: (m, n); op transposes when the flag is set (a is then stored (k, m)).
  virtual void gemm(bool transpose_a, bool transpose_b, int m, int n, int k,
                    float alpha, const float* a, const float* b, float beta,
                    float* c) = 0;

  /// y[r][c] = act(y[r][c] + bias[c]); y: (rows, cols), bias: (cols).
  virtual void bias_activation(float* y, const float* bias, int rows, int cols,
                               activation act) = 0;

  /// dy[i] *= act'(y[i]) where y is the activation's output; count elements.
  virtual void activation_backward(float* dy, const float* y, size_t count,
                                   activation act) = 0;

  /// db[c] = sum over r of dy[r][c]; dy: (rows, cols), db: (cols).
  virtual void bias_gradient(const float* dy, int rows, int cols, float* db) = 0;

  /// For logits z: (rows, classes) and labels: (rows), writes
  /// stats[0] = sum over rows of (logsumexp(z_r) - z_r[label_r]) and
  /// stats[1] = number of rows whose argmax equals the label (first max wins).
  /// If dlogits is not null it gets (softmax(z) - onehot(label)) * scale.
  /// The stats are added to what stats holds (callers zero them first).
  virtual void softmax_cross_entropy(const float* logits, const int32_t* labels,
                                     int rows, int classes, float scale,
                                     float* dlogits, float* stats) = 0;

  /// One Adam step over flat arrays (see optim/adam.hpp for the formula):
  /// m = b1 m + (1-b1) g; v = b2 v + (1-b2) g^2; w -= alpha m / (sqrt(v) + eps).
  /// The store's optimizer (optim/adam.cpp) steps through this op.
  virtual void adam_update(float* weights, const float* gradient, float* m,
                           float* v, size_t count, const adam_coefficients& c) = 0;

  // --- the store's step (a shard on this device) ---------------------------
  /// out = weight_0 g_0 + weight_1 g_1 + ... over `count` floats, added in
  /// the order given with denormals flushed: weighted_gradient_sum's bits
  /// (optim/optimizer.hpp). The gradients and out are in this backend's memory.
  virtual void weighted_sum(const std::vector<weighted_gradient>& terms, size_t count,
                            float* out) = 0;

  /// One Adam step (adam_update) on the gradient weighted_sum(terms), with
  /// the sum fused into the step's pass where the backend can: on the CPU the
  /// same bits as the sum first, then the step.
  virtual void adam_update_sum(float* weights, const std::vector<weighted_gradient>& terms,
                               float* m, float* v, size_t count,
                               const adam_coefficients& c) = 0;

  /// Tells whether any of `count` floats is NaN or infinite; waits for the
  /// ops queued before.
  virtual bool has_non_finite(const float* values, size_t count) = 0;

  /// Sets *flag (this backend's memory) to 1 if any of `count` floats is NaN
  /// or infinite, else leaves it: has_non_finite without the wait.
  virtual void flag_non_finite(const float* values, size_t count, float* flag) = 0;

  // --- the device-resident loop -------------------------------------------
  /// Returns the ops that device_trainer's loop needs besides the ones above
  /// (model/backend/resident_ops.hpp), or null where this backend cannot run
  /// that loop. The CPU and CUDA backends return themselves.
  virtual resident_loop_ops* resident_ops() { return nullptr; }
};

/// Creates a backend from a device name: "cpu" or "cuda:N". A device that is
/// missing (no GPU, index out of range, CUDA not built) is an error value.
expected<std::unique_ptr<backend>> make_backend(const std::string& device);

/// Builds the backend of device N of a kind.
using device_factory = std::function<expected<std::unique_ptr<backend>>(int index)>;

/// Test seam: makes make_backend build "kind:N" devices with `factory`, so
/// that a test can run the device paths (host_memory() false) without a GPU.
void register_device_kind(const std::string& kind, device_factory factory);

/// Names a device's kind: "cuda" for "cuda:1", "cpu" for "cpu". Devices of
/// one kind in one process can copy each other's memory.
std::string device_kind(const std::string& device);

/// Tells whether `device` names a device make_backend knows: "cpu", "cuda:N"
/// (whether or not it opens) or "kind:N" of a registered kind.
bool names_a_device(const std::string& device);

/// Owns an array in a backend's memory and frees it there.
template <class T>
class device_array {
public:
  device_array() = default;
  device_array(backend& owner, size_t count)
    : owner_(&owner), data_(static_cast<T*>(owner.allocate(count * sizeof(T)))),
      count_(count) {}
  device_array(device_array&& other) noexcept { swap(other); }
  device_array& operator=(device_array&& other) noexcept {
    swap(other);
    return *this;
  }
  device_array(const device_array&) = delete;
  device_array& operator=(const device_array&) = delete;
  ~device_array() {
    if (data_ != nullptr)
      owner_->release(data_);
  }

  T* data() const { return data_; }
  size_t size() const { return count_; }

  void upload(const T* host, size_t count) {
    owner_->copy_to_device(data_, host, count * sizeof(T));
  }
  void download(T* host, size_t count) const {
    owner_->copy_to_host(host, data_, count * sizeof(T));
  }

private:
  void swap(device_array& other) noexcept {
    std::swap(owner_, other.owner_);
    std::swap(data_, other.data_);
    std::swap(count_, other.count_);
  }

  backend* owner_ = nullptr;
  T* data_ = nullptr;
  size_t count_ = 0;
};

} // namespace troupe::detail
