// The buffers one store shard steps its range of the parameters in, and the
// older versions its answers still read: which buffer a step writes, and
// which one an answer shares (docs/architecture.md, "Whose buffer").
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "actors/store/variable_store.hpp"
#include "messages/shared_floats.hpp"
#include "model/backend/backend.hpp"
#include "model/shard_layout.hpp"

namespace troupe::detail {

/// Holds a shard's parameters at the current version, in the memory it
/// steps in (the host's, or its store device's), and what its policy's
/// traits ask to keep: `history_depth` older versions (delayed answers from
/// them). Either a buffer of the shard's own, shared with the answers that
/// carry it (a step writes in place when nobody else holds it, else a copy:
/// in a retired buffer nobody holds any more, else a new one), or, for sync
/// shards of one process on the host, the shard's range of two buffers every
/// shard writes its own range of in turn (a sync replica reads the
/// parameters only between a round's answer and its next push, and no shard
/// steps before every live replica has pushed).
class shard_buffers {
public:
  /// Buffers of the shard's own, starting at `initial` (range.count floats
  /// on the host), on `device` (null: the host).
  shard_buffers(shard_range range, const float* initial, std::shared_ptr<backend> device,
                uint32_t history_depth);

  /// The shard's range of two shared host buffers, which hold every shard's.
  shard_buffers(shard_range range, const shared_parameter_buffers& shared,
                uint32_t history_depth);

  /// Returns the store device, or null on the host.
  const std::shared_ptr<backend>& device() const { return device_; }

  /// Tells whether the shard steps its range of two shared buffers in turn.
  bool steps_shared_buffers() const { return shared_; }

  /// Before a step from version `version`: keeps it if the history asks,
  /// and leaves step_target() a buffer the step may write without changing
  /// a version someone still reads.
  void make_writable(uint64_t version);

  /// Returns where the next step writes: the shard's range of the current buffer.
  float* step_target() { return params_.get() + base_; }

  /// Marks a step queued on the device: answers carry an event that fires
  /// once it is done (with a history, the host waits for it instead: those
  /// answers come from older buffers the event does not cover).
  void step_done();

  /// Returns the current parameters `steps_back` versions back (the oldest
  /// kept when fewer are; 0: the current ones, at `version`) as a view where
  /// they live, with its version.
  std::pair<shared_floats, uint64_t> view(uint64_t steps_back, uint64_t version) const;

  /// Returns the version before the current one while this shard still
  /// holds it untouched (the other shared buffer until the next step, or the
  /// newest of the history); nothing otherwise.
  std::optional<shared_floats> previous() const;

  /// Returns the event after which the last step's writes are done (null on
  /// the host): device views of the buffers are ready then.
  const std::shared_ptr<const device_event>& ready() const { return stepped_; }

  /// Returns the parameters of `view` on the host: the view itself on the
  /// host; for the current version a copy made once per version, else a
  /// copy for this call.
  shared_floats on_host(const shared_floats& view, uint64_t version);

  /// Returns `view` (host memory, of `version`) rounded to `codec` (--wire):
  /// the view itself for fp32, else a rounded copy made once per version and
  /// buffer, which every answer of that version shares (shared buffers: the
  /// shard's range of one rounded buffer every shard writes, so that a
  /// replica joins the answers without a copy).
  shared_floats on_wire(const shared_floats& view, uint64_t version, float_codec codec);

private:
  std::shared_ptr<float> new_buffer() const;
  std::shared_ptr<float> free_buffer();

  size_t count_;
  size_t base_ = 0; // where the range starts in params_ (shared buffers: its offset)
  std::shared_ptr<backend> device_;
  std::shared_ptr<float> params_;
  bool shared_ = false;
  bool stepped_once_ = false; // shared: spare_ holds the version before
  std::shared_ptr<float> spare_; // shared: the other buffer
  std::shared_ptr<std::vector<float>> shared_wire_; // shared: on_wire's rounded copies
  std::vector<std::shared_ptr<float>> retired_;
  std::deque<std::pair<std::shared_ptr<float>, uint64_t>> history_; // oldest first
  size_t history_depth_;
  std::shared_ptr<const device_event> stepped_; // fires once the last step is done
  std::shared_ptr<std::vector<float>> host_copy_;
  uint64_t host_version_ = UINT64_MAX;
  shared_floats wire_copy_; // on_wire's rounded copy, of wire_version_ from wire_source_
  uint64_t wire_version_ = UINT64_MAX;
  const float* wire_source_ = nullptr;
};

} // namespace troupe::detail
