// A replica's compute: the samples of its share of a round gathered into
// batch buffers, and the gradient its model computes of them, through
// troupe::model into a host buffer or, handing over on its device, through
// the model's device capability into device memory (device_step).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <caf/error.hpp>
#include <caf/expected.hpp>

#include "actors/replica/device_step.hpp"
#include "actors/replica/replica_setup.hpp"
#include "actors/replica/slices_ahead.hpp"
#include "messages/protocol.hpp"
#include "model/backend/device_buffers.hpp"
#include "model/network.hpp"

namespace troupe::detail {

/// Computes a replica's shares of rounds with its setup's model.
class share_compute {
public:
  /// Computes with `setup`'s model, with batch buffers for its max_batch.
  explicit share_compute(std::shared_ptr<replica_setup> setup);

  /// Copies the training rows `indices` into the batch buffers, with each
  /// sample's class weight; a label the source gave out of range is bad_data.
  /// Rows gather_ahead() copied already are taken as they are.
  caf::error gather(const std::vector<uint32_t>& indices);

  /// Copies the rows `indices` of a round to come into spare buffers, which
  /// the replica does while it waits for its push's answers: gather() then
  /// takes them if that round's rows are still these (a loss may re-plan it).
  void gather_ahead(const std::vector<uint32_t>& indices);

  /// Computes the gradient of the rows gather() copied (`indices`) at
  /// `parameters` for store round `round` into a host buffer, rounded to the
  /// run's codec (int8: with this replica's error feedback): sets
  /// push.gradient and push.proven_finite, and returns the batch's stats.
  /// With a `plan` (not int8) a model that tells which parts it has written
  /// (troupe::gradient_listener) has the planned shards' slices sent while
  /// it computes on.
  batch_stats on_host(const std::vector<uint32_t>& indices, const float* parameters,
                      uint64_t round, push_msg& push, const ahead_plan* plan = nullptr);

  /// Queues the gradient of the rows `indices` on the device at the shards'
  /// answers `parts` or, without parts, at `host_parameters` (an epoch's
  /// start) into push.device_gradient. Returns the stats of the step before
  /// (none for the first), or bad_data.
  caf::expected<batch_stats> on_device(const std::vector<uint32_t>& indices,
                                       const std::vector<params_msg>& parts,
                                       const float* host_parameters, push_msg& push);

  /// Returns the stats of the last step queued on the device, once it is
  /// done, or none (an epoch's end).
  batch_stats drain();

  /// Returns the --wire=int8 residual (empty before the first push).
  const std::vector<float>& residual() const { return residual_; }

  /// Returns a copy of the --wire=int8 residual, the model's size (zeros
  /// before the first push).
  shared_floats residual_copy() const;

  /// Returns a copy of the residual from before this replica's push of store
  /// round `round`: the one kept from before the last push, or the current
  /// one while that push is still to come; an error once it pushed a later
  /// round.
  caf::expected<shared_floats> residual_before(uint64_t round) const;

  /// The store round of the last push (UINT64_MAX: none yet).
  uint64_t last_push_round() const { return residual_round_; }

  /// Goes on from `residual` (a resumed run's), the model's size.
  void set_residual(std::vector<float> residual) { residual_ = std::move(residual); }

private:
  // One round's samples in batch buffers.
  struct batch_rows {
    std::vector<float> images;   // (max_batch, inputs)
    std::vector<int32_t> labels; // (max_batch)
    std::vector<float> targets;  // (max_batch, target width): a regression set's
    std::vector<float> weights;  // each sample's class weight (--class-weights)
    std::vector<uint32_t> indices; // the rows they are (gather_ahead's)
    caf::error error;              // what their gathering found wrong
  };

  void reserve(size_t samples);
  void size_rows(batch_rows& rows) const;
  caf::error gather_into(batch_rows& rows, const std::vector<uint32_t>& indices);
  caf::error bad_data(const std::string& why) const;

  std::shared_ptr<replica_setup> setup_;
  // Gradient buffers in host memory the backend copies fastest (page-locked
  // for a GPU), reused once the store lets go of them. The store may still
  // hold the last one for a moment after answering (or, delayed, until its
  // round closes), so a few rotate, as many as are in flight.
  std::unique_ptr<device_buffer_pool> host_gradients_;
  std::unique_ptr<device_step> on_device_;
  batch_rows rows_;           // the round's, which on_host computes
  batch_rows ahead_;          // gather_ahead's, for a round to come
  bool ahead_ready_ = false;
  // --wire=int8's error feedback: what quantizing this replica's gradients
  // has left out so far, added to the next one (messages/int8_blocks.hpp).
  // It lives with the actor (a respawned replica starts from zero); an
  // epoch's report and the push after a cut carry it to snapshots and
  // checkpoints, an epoch order back.
  std::vector<float> residual_;
  // The residual from before the last push, of store round residual_round_:
  // quantizing reads it and writes residual_, and the two swap each push.
  static constexpr uint64_t no_push = UINT64_MAX;
  std::vector<float> residual_before_;
  uint64_t residual_round_ = no_push;
};

} // namespace troupe::detail
