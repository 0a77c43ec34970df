// What a model computing on a replica's backend may offer beyond
// troupe::model: buffers that grow with the batch, a proof that its last
// gradient is finite, and the steps of the device hand-over, where the
// parameters, the batch and the gradient stay in the backend's memory
// (actors/replica/device_step.cpp). Internal: a user's model never sees it.
#pragma once

#include <cstddef>
#include <cstdint>

#include <troupe/model.hpp>

#include "model/network.hpp"

namespace troupe::detail {

/// Computes a model's steps in its backend's memory; the built-in network
/// model offers it (device_capability_of finds it).
class device_capability {
public:
  virtual ~device_capability() = default;

  /// Makes room for batches of up to `max_batch` samples. Returns true if
  /// the device buffers moved: a recording of the steps is then stale.
  virtual bool reserve(size_t max_batch) = 0;

  /// Tells whether the gradient model::gradient wrote last is proven to
  /// hold only finite floats, so a store shard in this process need not
  /// read all of it to check. False says nothing.
  virtual bool last_gradient_proven_finite() const = 0;

  // --- the device hand-over: one step, queued and never waited for --------
  /// Copies host `parameters` into device_parameters() and makes the steps
  /// read them.
  virtual void use_parameters(const float* parameters) = 0;
  /// Returns the model's own parameter buffer, whose address never changes
  /// between reserve() calls that move buffers.
  virtual float* device_parameters() = 0;
  /// Makes the steps read device_parameters() (written by the caller).
  virtual void use_device_parameters() = 0;
  /// Returns the batch buffers (device memory) the step reads.
  virtual float* staged_inputs() = 0;   // (max_batch, inputs)
  virtual int32_t* staged_labels() = 0; // (max_batch)
  /// Queues the gradient of the `batch` staged rows into device_gradient(),
  /// adding loss and hits to the device stats, and flags NaN or Inf. It
  /// only queues ops (no copy, no wait), so a backend can record it.
  virtual void queue_staged_checked_gradient(size_t batch) = 0;
  /// Returns the gradient the step writes (device memory, parameter_count floats).
  virtual const float* device_gradient() = 0;
  /// Returns the float the step sets on NaN or Inf (device memory).
  virtual const float* device_non_finite_flag() = 0;
  /// Queues a copy of the device stats into `page_locked` (stats_size
  /// floats of backend::allocate_host) and clears them.
  virtual void queue_take_stats(float* page_locked) = 0;

  /// The floats queue_take_stats copies: loss sum, correct, non-finite flag.
  static constexpr size_t stats_size = network::stats_size;
  /// Reads the stats queue_take_stats copied, once the step's event fired.
  static batch_stats stats_from(const float* copied) { return network::stats_from(copied); }
};

/// Returns the device capability `m` offers, or null (a user's model).
inline device_capability* device_capability_of(model& m) {
  return dynamic_cast<device_capability*>(&m);
}

} // namespace troupe::detail
