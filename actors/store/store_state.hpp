// One store shard's state: its range of the parameters and the buffers
// they live in, its optimizer and update policy, its open pushes and stats,
// and the step, answer and gradient checks the policy calls through
// store_port. The actor around it is in variable_store.cpp.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <caf/actor_addr.hpp>
#include <caf/error.hpp>
#include <caf/typed_response_promise.hpp>

#include "actors/policy/update_policy.hpp"
#include "messages/interfaces.hpp"
#include "model/backend/device_buffers.hpp"
#include "model/optim/optimizer.hpp"
#include "model/shard_layout.hpp"

namespace troupe {

/// The state of one variable store shard (the actor's `self->state`).
struct store_state : store_port {
  static inline const char* name = "troupe.store";

  shard_range range; // this shard's part of the flat buffer
  // The parameters: this shard's range of the buffer `params` points into,
  // from `base` on, in the memory the shard steps in: the host's, or with a
  // store device (--store-device) that device's, where the optimizer state
  // lives too. Either a buffer of the shard's own, shared with the answers
  // that carry it (the optimizer writes in place when no one else holds it,
  // else into a copy), or, for sync shards of one process on the host, two
  // buffers every shard writes its own range of in turn (`in_place`; base =
  // range.offset; see shared_parameter_buffers): a sync replica reads the
  // parameters only between a round's answer and its next push, and no
  // shard steps before every live replica has pushed.
  std::shared_ptr<float> params;
  size_t base = 0;
  bool in_place = false;
  std::shared_ptr<float> spare; // in place: the other shared buffer
  // Otherwise: buffers of older versions, reused once no answer holds them
  // (async replicas each hold the version they were answered).
  std::vector<std::shared_ptr<float>> retired;
  // The policy's history_depth() versions before the current one, oldest
  // first, with their version numbers (delayed answers from them).
  std::deque<std::pair<std::shared_ptr<float>, uint64_t>> history;
  size_t history_depth = 0;
  std::shared_ptr<backend> device; // the store device, or null; outlives `optim`
  std::unique_ptr<device_buffer_pool> uploads; // host gradients, copied to the device
  std::shared_ptr<const device_event> stepped; // fires once the last step is done
  // Gradients a replica on this device checked there (shared_floats::
  // non_finite), by where they start: the step skips itself on the device
  // if one is flagged, and the shard reads that verdict one step later
  // (`unchecked`), when the first push of the next round, a checkpoint or
  // the final parameters wait for it.
  struct device_checked {
    uint32_t replica = 0;
    uint64_t round = 0;
    std::weak_ptr<const float> flag; // the policy holds the gradient, and so the flag
  };
  std::unordered_map<const float*, device_checked> checked_on_device;
  struct step_verdict {
    std::shared_ptr<const device_event> done;
    std::shared_ptr<float> skipped; // page-locked: non-zero if the step skipped itself
    std::vector<std::pair<device_checked, std::shared_ptr<const float>>> flags;
  };
  std::optional<step_verdict> unchecked;
  std::shared_ptr<float> any_flagged;  // device: the sum of a step's flags
  std::shared_ptr<float> verdict_slot; // page-locked: one verdict is read before the next
  caf::error refused_on_device;        // a flagged gradient: every later push gets this
  caf::error stopped;                  // a replica died in an aborting run: every push gets this
  // On a device: a host copy of the parameters at version `host_version`,
  // made when someone needs the values on the host.
  std::shared_ptr<std::vector<float>> host_copy;
  uint64_t host_version = 0;
  std::unique_ptr<optimizer> optim;
  std::unique_ptr<update_policy> policy;
  uint64_t version = 0;
  // A push not answered yet: where the answer goes and the staleness it reports.
  struct open_push {
    caf::typed_response_promise<params_msg> promise;
    uint64_t staleness = 0;
    bool device_answer = false; // answer in device memory (push_msg::device_answer)
  };
  std::unordered_map<uint64_t, open_push> open; // by ticket
  uint64_t next_ticket = 0;
  std::unordered_map<caf::actor_addr, uint32_t> replicas;
  store_stats stats;
  store_config settings; // shard, interval, optimizer; no buffers
  checkpoint_writer_actor writer; // where periodic parts go; none without --checkpoint
  uint64_t epoch = 0;
  uint64_t epoch_first_round = 0;
  uint64_t rounds_since_checkpoint = 0;
  bool checkpoint_due = false; // a closed round made a periodic checkpoint due

  // A buffer for this shard's range, in the memory it steps in; on the
  // host not zeroed (a copy fills it).
  std::shared_ptr<float> new_buffer() const;

  // A retired buffer no answer holds any more, else a new one.
  std::shared_ptr<float> free_buffer();

  // The current parameters as a host view: themselves, or (on a device) a
  // copy made once per version.
  shared_floats host_values();

  // This shard's part of a checkpoint: a periodic one (mid-epoch, as far as
  // the shard knows), or the one the coordinator asks for once an epoch is
  // complete.
  checkpoint_part part(bool epoch_complete);

  // The policy closed a round (store_port): count it towards the next
  // periodic checkpoint, which after_round sends once the policy returned.
  void round_closed() override;

  // An answer: this shard's range at the current version, or `steps_back`
  // versions before it (a delayed policy's), as a view where it lives (the
  // host, or the device if the pusher asked for device memory) or else a
  // host copy.
  params_msg answer_value(uint64_t staleness, uint64_t steps_back = 0,
                          bool device_answer = false);

  // The buffer the next step writes: this shard's range of the parameters.
  float* step_target() { return params.get() + base; }

  // After a step on a device, the answers carry an event that fires once it
  // is done: their readers queue behind it, and so does the pusher's next
  // gradient, into a buffer this step may still be reading. That holds for
  // every policy that steps a push before it answers it. One that answers
  // first (delayed, which keeps history) waits for the step instead.
  void step_done();

  void apply_step(const float* gradient, float lr_scale) override;

  void apply_weighted_step(const std::vector<weighted_gradient>& terms) override;

  // Makes the next step skip itself on the device if a replica flagged one
  // of its gradients there: one flag is read as it is, several as their sum.
  std::optional<step_verdict> guard_step(const std::vector<weighted_gradient>& terms);

  void queue_verdict(std::optional<step_verdict> verdict);

  // Reads the last step's verdict, waiting for that step if need be: an
  // error naming the replica and round of a gradient the device found NaN
  // or Inf in (the step left the parameters as they were). Once refused,
  // always refused: the run ends.
  caf::error check_device_verdict();

  // Before a step: a buffer the step may write without changing a version
  // someone still reads (history, answers, the replicas of a sync round).
  void make_writable();

  // A gradient in host memory or on another device, copied to this
  // shard's device, so that the policy sees gradients here only. A copy from
  // another device finishes before the pusher gets its buffer back (it is
  // free once the returned view replaces the original); a host source is
  // read before copy_to_device returns.
  shared_floats copy_here(const shared_floats& gradient);

  void answer(uint64_t ticket) override { answer_from(ticket, 0); }

  void answer_from(uint64_t ticket, uint64_t steps_back) override;

  // The shard's own checks of a push, which leave it ready for the policy:
  // the size of its slice, memory the shard can read (a device shard first
  // copies a host gradient, or one on another device of its kind, to its
  // own), and finite values (a gradient in device memory comes checked by
  // the replica that computed it: see shared_floats; one in host memory
  // may come proven finite by its replica: see push_msg). Whether its
  // replica and round fit is the policy's call (on_push).
  caf::error take_gradient(push_msg& push);
};

} // namespace troupe
