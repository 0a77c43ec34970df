// Test-only: "sim:N", a device whose memory is host memory the CPU backend
// computes on, but which Troupe must treat as a device's (host_memory() is
// false): replicas and store shards on it take the device paths without a
// GPU. Every op checks that its pointers lie in memory this simulated device
// allocated, so a host buffer, or another device's, handed to a device op (a
// missing copy) throws; the transfers across the simulated bus are counted.
// Ops are queued and run as late as they can (tests/actors/simulated_stream.hpp),
// so a missing wait for an event or for the device shows as stale values.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "model/backend/backend.hpp"
#include "model/backend/cpu/eigen_backend.hpp"
#include "model/backend/resident_ops.hpp"
#include "tests/actors/forwarding_backend.hpp"
#include "tests/actors/simulated_stream.hpp"

namespace troupe::testing {

/// Counts what crossed between host and simulated devices, and between
/// simulated devices, in bytes.
struct simulated_bus {
  std::atomic<uint64_t> to_device{0};
  std::atomic<uint64_t> to_host{0};
  std::atomic<uint64_t> between_devices{0};
  std::atomic<uint64_t> events_waited{0}; // wait_for calls
  std::atomic<uint64_t> waited_unfired{0}; // ... for an event whose ops had not run yet
  std::atomic<uint64_t> host_buffers{0};  // allocate_host calls (staging buffers)
  std::atomic<uint64_t> recorded{0};      // steps recorded (resident_loop_ops::record)
};


inline simulated_bus& sim_bus() {
  static simulated_bus bus;
  return bus;
}

/// The CPU's resident ops, queued on a simulated stream; recordings counted.
class counting_recorder final : public resident_loop_ops {
public:
  counting_recorder(resident_loop_ops& inner, simulated_stream& stream)
    : inner_(inner), stream_(stream) {}
  void gather_rows(const float* inputs, const int32_t* labels, int features,
                   const uint32_t* order, const step_counters* counters, int rows,
                   float* inputs_out, int32_t* labels_out) override {
    stream_.enqueue([=, &inner = inner_] {
      inner.gather_rows(inputs, labels, features, order, counters, rows, inputs_out,
                        labels_out);
    });
  }
  void advance_step(step_counters* counters, int rows) override {
    stream_.enqueue([=, &inner = inner_] { inner.advance_step(counters, rows); });
  }
  void adam_update_counted(float* weights, const float* gradient, float* m, float* v,
                           size_t count, const adam_hyperparameters& h,
                           const step_counters* counters) override {
    stream_.enqueue([=, &inner = inner_] {
      inner.adam_update_counted(weights, gradient, m, v, count, h, counters);
    });
  }
  expected<std::unique_ptr<recorded_ops>> record(std::function<void()> queue_ops) override {
    ++sim_bus().recorded;
    return inner_.record(std::move(queue_ops));
  }

private:
  resident_loop_ops& inner_;
  simulated_stream& stream_;
};

/// The allocations of every simulated device: start -> bytes and device.
class simulated_memory {
public:
  static simulated_memory& instance() {
    static simulated_memory memory;
    return memory;
  }
  void add(const void* ptr, size_t bytes, const std::string& device) {
    std::lock_guard<std::mutex> guard(mutex_);
    blocks_[reinterpret_cast<uintptr_t>(ptr)] = block{bytes, device};
  }
  void remove(const void* ptr) {
    std::lock_guard<std::mutex> guard(mutex_);
    blocks_.erase(reinterpret_cast<uintptr_t>(ptr));
  }
  /// Returns the device whose memory holds `ptr`; empty for host memory.
  std::string owner(const void* ptr) const {
    std::lock_guard<std::mutex> guard(mutex_);
    const auto address = reinterpret_cast<uintptr_t>(ptr);
    auto after = blocks_.upper_bound(address);
    if (after == blocks_.begin())
      return {};
    --after;
    return address < after->first + after->second.bytes ? after->second.device : std::string{};
  }

private:
  struct block {
    size_t bytes;
    std::string device;
  };
  mutable std::mutex mutex_;
  std::map<uintptr_t, block> blocks_;
};

/// Computes like the CPU backend, in memory it registers as a device's, on a
/// queue that runs each op only once something waits for it.
class simulated_device final : public forwarding_backend {
public:
  explicit simulated_device(int index)
    : forwarding_backend(make_eigen_backend()), name_("sim:" + std::to_string(index)),
      stream_(simulated_stream::make()),
      recorder_(*forwarding_backend::resident_ops(), *stream_) {}

  ~simulated_device() override { stream_->run_all(); }

  std::string name() const override { return name_; }
  bool host_memory() const override { return false; }

  void* allocate(size_t bytes) override {
    void* ptr = forwarding_backend::allocate(bytes);
    simulated_memory::instance().add(ptr, bytes, name_);
    return ptr;
  }
  void* allocate_host(size_t bytes) override {
    ++sim_bus().host_buffers;
    void* ptr = forwarding_backend::allocate_host(bytes);
    simulated_memory::instance().add(ptr, bytes, page_locked);
    return ptr;
  }
  // Freeing waits for every queue, as cudaFree and cudaFreeHost do.
  void release(void* ptr) noexcept override {
    simulated_stream::run_every_stream();
    simulated_memory::instance().remove(ptr);
    forwarding_backend::release(ptr);
  }
  void release_host(void* ptr) noexcept override {
    simulated_stream::run_every_stream();
    simulated_memory::instance().remove(ptr);
    forwarding_backend::release_host(ptr);
  }
  // Pageable host memory is read before the call returns (as CUDA stages
  // it); page-locked host memory and device memory when the copy runs.
  void copy_to_device(void* dst, const void* src, size_t bytes) override {
    on_device(dst, "copy_to_device's destination");
    const std::string from = simulated_memory::instance().owner(src);
    if (from.empty()) {
      sim_bus().to_device += bytes;
      auto staged = std::make_shared<std::vector<char>>(static_cast<const char*>(src),
                                                        static_cast<const char*>(src) + bytes);
      queue([this, dst, staged] {
        forwarding_backend::copy_to_device(dst, staged->data(), staged->size());
      });
      return;
    }
    if (from == page_locked)
      sim_bus().to_device += bytes;
    else if (from != name_)
      sim_bus().between_devices += bytes;
    queue([this, dst, src, bytes] { forwarding_backend::copy_to_device(dst, src, bytes); });
  }
  void copy_to_host(void* dst, const void* src, size_t bytes) override {
    on_device(src, "copy_to_host's source");
    sim_bus().to_host += bytes;
    stream_->run_all();
    forwarding_backend::copy_to_host(dst, src, bytes);
  }
  void queue_copy_to_host(void* dst, const void* src, size_t bytes) override {
    on_device(src, "queue_copy_to_host's source");
    if (simulated_memory::instance().owner(dst) != page_locked)
      throw std::logic_error("queue_copy_to_host's destination is not page-locked host memory");
    sim_bus().to_host += bytes;
    queue([this, dst, src, bytes] { forwarding_backend::copy_to_host(dst, src, bytes); });
  }
  void fill_zero(void* dst, size_t bytes) override {
    on_device(dst, "fill_zero");
    queue([this, dst, bytes] { forwarding_backend::fill_zero(dst, bytes); });
  }
  void finish() override { stream_->run_all(); }
  void gemm(bool transpose_a, bool transpose_b, int m, int n, int k, float alpha,
            const float* a, const float* b, float beta, float* c) override {
    on_device(a, "gemm's a");
    on_device(b, "gemm's b");
    on_device(c, "gemm's c");
    queue([=] {
      forwarding_backend::gemm(transpose_a, transpose_b, m, n, k, alpha, a, b, beta, c);
    });
  }
  void bias_activation(float* y, const float* bias, int rows, int cols,
                       activation act) override {
    on_device(y, "bias_activation's y");
    on_device(bias, "bias_activation's bias");
    queue([=] { forwarding_backend::bias_activation(y, bias, rows, cols, act); });
  }
  void activation_backward(float* dy, const float* y, size_t count,
                           activation act) override {
    on_device(dy, "activation_backward's dy");
    on_device(y, "activation_backward's y");
    queue([=] { forwarding_backend::activation_backward(dy, y, count, act); });
  }
  void bias_gradient(const float* dy, int rows, int cols, float* db) override {
    on_device(dy, "bias_gradient's dy");
    on_device(db, "bias_gradient's db");
    queue([=] { forwarding_backend::bias_gradient(dy, rows, cols, db); });
  }
  void softmax_cross_entropy(const float* logits, const int32_t* labels, int rows,
                             int classes, float scale, float* dlogits,
                             float* stats) override {
    on_device(logits, "softmax_cross_entropy's logits");
    on_device(labels, "softmax_cross_entropy's labels");
    on_device(stats, "softmax_cross_entropy's stats");
    queue([=] {
      forwarding_backend::softmax_cross_entropy(logits, labels, rows, classes, scale, dlogits,
                                                stats);
    });
  }
  void adam_update(float* weights, const float* gradient, float* m, float* v, size_t count,
                   const adam_coefficients& c) override {
    on_device(weights, "adam_update's weights");
    on_device(gradient, "adam_update's gradient");
    on_device(m, "adam_update's m");
    queue([=] { forwarding_backend::adam_update(weights, gradient, m, v, count, c); });
  }
  void adam_update_sum(float* weights, const std::vector<weighted_gradient>& terms, float* m,
                       float* v, size_t count, const adam_coefficients& c) override {
    on_device(weights, "adam_update_sum's weights");
    for (const auto& term : terms)
      on_device(term.gradient, "adam_update_sum's gradient");
    on_device(m, "adam_update_sum's m");
    on_device(v, "adam_update_sum's v");
    queue([=] { forwarding_backend::adam_update_sum(weights, terms, m, v, count, c); });
  }
  void weighted_sum(const std::vector<weighted_gradient>& terms, size_t count,
                    float* out) override {
    for (const auto& term : terms)
      on_device(term.gradient, "weighted_sum's gradient");
    on_device(out, "weighted_sum's out");
    queue([=] { forwarding_backend::weighted_sum(terms, count, out); });
  }
  bool has_non_finite(const float* values, size_t count) override {
    on_device(values, "has_non_finite's values");
    stream_->run_all();
    return forwarding_backend::has_non_finite(values, count);
  }
  void flag_non_finite(const float* values, size_t count, float* flag) override {
    on_device(values, "flag_non_finite's values");
    on_device(flag, "flag_non_finite's flag");
    queue([=] { forwarding_backend::flag_non_finite(values, count, flag); });
  }
  resident_loop_ops* resident_ops() override { return &recorder_; }
  std::shared_ptr<const device_event> record_event() override {
    return std::make_shared<const simulated_event>(stream_, stream_->position());
  }
  void wait_for(const device_event& event) override {
    const auto* recorded = dynamic_cast<const simulated_event*>(&event);
    if (recorded == nullptr)
      throw std::logic_error(name_ + " cannot wait for an event of another kind of device");
    ++sim_bus().events_waited;
    if (!recorded->fired())
      ++sim_bus().waited_unfired;
    queue([stream = recorded->stream(), position = recorded->position()] {
      stream->run_until(position);
    });
  }

private:
  static constexpr const char* page_locked = "page-locked host";

  void queue(std::function<void()> op) { stream_->enqueue(std::move(op)); }

  void on_device(const void* ptr, const char* what) const {
    const std::string owner = simulated_memory::instance().owner(ptr);
    if (owner != name_)
      throw std::logic_error(std::string(what) + " is in "
                             + (owner.empty() ? "host" : owner) + " memory, not in " + name_
                             + " memory");
  }

  std::string name_;
  std::shared_ptr<simulated_stream> stream_;
  counting_recorder recorder_;
};

/// Makes "sim:N" a device for make_backend (once per process).
inline void register_simulated_device() {
  register_device_kind("sim", [](int index) -> expected<std::unique_ptr<backend>> {
    return std::unique_ptr<backend>(new simulated_device(index));
  });
}

} // namespace troupe::testing
