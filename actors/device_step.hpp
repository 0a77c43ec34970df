// A replica's step when it hands over in device memory (see the replica's
// hands_over_on_device): the shards' answers are copied into the network's
// own parameter buffer, the batch is gathered into page-locked host memory
// and goes down from there, the gradient is computed by a recorded step (on
// a GPU one CUDA graph launch instead of a launch per op) and copied into a
// buffer the store reads in place.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "messages/protocol.hpp"
#include "model/data/dataset.hpp"
#include "model/backend/device_buffers.hpp"
#include "model/backend/resident_ops.hpp"
#include "model/network.hpp"

namespace troupe {

/// Runs a replica's steps on its device; one per replica.
class device_step {
public:
  /// Steps on `compute`, the backend of `net` (`device` names it).
  device_step(std::shared_ptr<backend> compute, std::string device);

  /// Computes the gradient of the rows `indices` of `data` at the
  /// parameters of `parts` (the shards' last answers, whose steps the device
  /// queues behind) or, without parts, at `host_params` (an epoch's start).
  /// On return the gradient is complete and checked (stats' non_finite);
  /// `gradient` is a view of a device buffer of its own.
  batch_stats run(network& net, const dataset& data, const std::vector<uint32_t>& indices,
                  const std::vector<params_msg>& parts, const float* host_params,
                  shared_floats& gradient);

  /// Forgets the recorded steps: `net` was rebuilt, its buffers moved.
  void reset() { recorded_.clear(); }

private:
  void use_parts(network& net, const std::vector<params_msg>& parts);
  void stage_batch(network& net, const dataset& data, const std::vector<uint32_t>& indices);
  void queue_gradient(network& net, size_t samples);

  std::shared_ptr<backend> compute_;
  std::string device_;
  std::unique_ptr<device_buffer_pool> gradients_;
  // The batch on the host, page-locked: its copies run while the host goes
  // on. Reused only after the step that read it (run() waits for its loss).
  std::shared_ptr<float> staged_images_;
  std::shared_ptr<float> staged_labels_; // int32 labels in a float-sized block
  size_t staged_rows_ = 0;
  std::map<size_t, std::unique_ptr<recorded_ops>> recorded_; // by batch size
  bool cannot_record_ = false; // the device said no once: queue op by op
};

} // namespace troupe
