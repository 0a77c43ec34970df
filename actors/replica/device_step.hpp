// A replica's step when it hands over in device memory (see the replica's
// hands_over_on_device): the shards' answers are copied into the model's
// own parameter buffer (device_capability), the batch is gathered into page-locked host memory
// and goes down from there, the gradient is computed by a recorded step (on
// a GPU one CUDA graph launch instead of a launch per op) and copied into a
// buffer the store reads in place. The host does not wait for the step it
// queues: it reads the stats of the step before, which the device has
// finished or is about to, while this one keeps it busy.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "messages/protocol.hpp"
#include "model/data/dataset.hpp"
#include "model/backend/device_buffers.hpp"
#include "model/backend/resident_ops.hpp"
#include "model/device_capability.hpp"

namespace troupe::detail {

/// Runs a replica's steps on its device; one per replica.
class device_step {
public:
  /// Steps on `compute`, the backend of the model (`device` names it),
  /// whose samples have `inputs` features and which has `parameter_count`
  /// parameters.
  device_step(std::shared_ptr<backend> compute, std::string device, int inputs,
              size_t parameter_count);

  /// Queues the gradient of the rows `indices` of `data` at the parameters
  /// of `parts` (the shards' last answers, whose steps the device queues
  /// behind) or, without parts, at `host_params` (an epoch's start).
  /// `gradient` becomes a view of a device buffer of its own, with `ready`
  /// (fires once it is written) and `non_finite` (the device's NaN/Inf check
  /// of it). Returns the stats of the step before (none for the first),
  /// waiting for that step only, or the error of a label out of range.
  expected<batch_stats> run(device_capability& model, const data_source& data,
                            const std::vector<uint32_t>& indices,
                            const std::vector<params_msg>& parts, const float* host_params,
                            device_floats& gradient);

  /// Waits for the last step queued and returns its stats (an epoch's end).
  batch_stats drain();

  /// Forgets the recorded steps: the model's buffers moved (reserve).
  void reset() { recorded_.clear(); }

private:
  // Page-locked host memory one step uses: its batch (copied down while the
  // host goes on) and its stats (copied up). Two steps take turns, so a
  // slot is written again only once run() has waited for its last step.
  struct staging_slot {
    std::shared_ptr<float> inputs;
    std::shared_ptr<float> labels; // int32 labels in a float-sized block
    size_t rows = 0;
    std::shared_ptr<float> stats; // device_capability::stats_size floats
  };
  // The last step queued: its stats arrive in `stats` once `done` fired.
  struct step_in_flight {
    std::shared_ptr<float> stats;
    std::shared_ptr<const device_event> done;
    int64_t samples = 0;
  };

  void use_parts(device_capability& model, const std::vector<params_msg>& parts);
  status stage_batch(staging_slot& slot, device_capability& model, const data_source& data,
                     const std::vector<uint32_t>& indices);
  void queue_gradient(device_capability& model, size_t samples);

  std::shared_ptr<backend> compute_;
  std::string device_;
  size_t inputs_;
  size_t parameter_count_;
  std::unique_ptr<device_buffer_pool> gradients_; // a gradient and its NaN/Inf flag each
  std::array<staging_slot, 2> slots_;
  size_t next_slot_ = 0;
  std::optional<step_in_flight> last_;
  std::map<size_t, std::unique_ptr<recorded_ops>> recorded_; // by batch size
  bool cannot_record_ = false; // the device said no once: queue op by op
};

} // namespace troupe::detail
