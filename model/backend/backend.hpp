// The compute backend interface: memory where the backend computes, and the
// heavy ops of a dense network's step. The CPU (Eigen) backend is the
// reference; the CUDA backend implements the same ops on a GPU.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "model/expected.hpp"
#include "model/model_spec.hpp"

namespace troupe {

/// Holds the per-step constants of Adam; alpha already carries the bias
/// correction lr * sqrt(1 - b2^t) / (1 - b1^t).
struct adam_coefficients {
  float alpha = 0;
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float epsilon = 1e-7f;
};

/// Holds Adam's hyperparameters, for the op that derives each step's
/// coefficients on the device from a step count kept there.
struct adam_hyperparameters {
  float learning_rate = 1e-3f;
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float epsilon = 1e-7f;
};

/// Says where a device-driven training loop stands. It lives in backend
/// memory so that a recorded step (see backend::record) reads and advances it
/// on the device: the host queues the same step again and again unchanged.
struct step_counters {
  int64_t cursor = 0; // the next batch starts at order[cursor]
  int64_t steps = 0;  // optimizer steps taken, Adam's t
};

/// Replays a sequence of ops that backend::record captured.
class recorded_ops {
public:
  virtual ~recorded_ops() = default;
  /// Queues the recorded ops again, in order, as one unit.
  virtual void replay() = 0;
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
  virtual void adam_update(float* weights, const float* gradient, float* m,
                           float* v, size_t count, const adam_coefficients& c) = 0;

  // --- device-driven steps (data resident in backend memory) ----------------
  /// Copies rows order[counters->cursor + r], r < rows, of a resident data set
  /// (images: (n, features), labels: (n)) into images_out and labels_out.
  /// The caller guarantees that cursor + rows stays within order.
  virtual void gather_rows(const float* images, const int32_t* labels, int features,
                           const uint32_t* order, const step_counters* counters,
                           int rows, float* images_out, int32_t* labels_out) = 0;

  /// counters->cursor += rows; counters->steps += 1.
  virtual void advance_step(step_counters* counters, int rows) = 0;

  /// Like adam_update, with the step number t = counters->steps read on the
  /// device (1-based: call after advance_step) and the coefficients derived
  /// from it as adam_step_coefficients does on the host.
  virtual void adam_update_counted(float* weights, const float* gradient, float* m,
                                   float* v, size_t count,
                                   const adam_hyperparameters& h,
                                   const step_counters* counters) = 0;

  // --- recording ------------------------------------------------------------
  /// Records the ops that `queue_ops` queues, without running them, so that
  /// replay() queues them all again at once (on a GPU: a CUDA graph, one
  /// launch instead of one per op). queue_ops may queue ops only: no copies
  /// to the host, no allocation. By default replay() calls queue_ops again.
  /// A device that cannot record is an error value; callers then queue the
  /// ops one by one.
  virtual expected<std::unique_ptr<recorded_ops>> record(std::function<void()> queue_ops);
};

/// Creates a backend from a device name: "cpu" or "cuda:N". A device that is
/// missing (no GPU, index out of range, CUDA not built) is an error value.
expected<std::unique_ptr<backend>> make_backend(const std::string& device);

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

} // namespace troupe
