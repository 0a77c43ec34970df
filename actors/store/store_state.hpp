// One store shard's state: its range of the parameters (shard_buffers.hpp),
// its optimizer and update policy, its open pushes and stats, and the step,
// answer and gradient checks the policy calls through store_port. The actor
// around it is in variable_store.cpp.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <caf/actor.hpp>
#include <caf/actor_addr.hpp>
#include <caf/error.hpp>
#include <caf/typed_response_promise.hpp>

#include "actors/policy/policy_registry.hpp"
#include "actors/store/answer_bases.hpp"
#include "actors/store/clip_gate.hpp"
#include "actors/store/device_verdicts.hpp"
#include "actors/store/replica_table.hpp"
#include "actors/store/shard_buffers.hpp"
#include "messages/interfaces.hpp"
#include "model/backend/device_buffers.hpp"
#include "model/optim/optimizer.hpp"
#include "model/shard_layout.hpp"

namespace troupe::detail {

/// The state of one variable store shard (the actor's `self->state`).
struct store_state : store_port {
  static inline const char* name = "troupe.store";

  shard_range range; // this shard's part of the flat buffer
  std::unique_ptr<shard_buffers> buffers; // holds the store device, which outlives `optim`
  std::unique_ptr<device_verdicts> verdicts; // with a store device
  std::unique_ptr<device_buffer_pool> uploads; // host gradients, copied to the device
  std::unique_ptr<optimizer> optim;
  std::unique_ptr<update_policy> policy;
  answer_bases bases; // the versions answers went out at, for coded answers
  policy_traits traits;
  uint64_t version = 0;
  // A push not answered yet: where the answer goes and the staleness it reports.
  struct open_push {
    caf::typed_response_promise<params_msg> promise;
    uint64_t staleness = 0;
    bool device_answer = false; // answer in device memory (push_msg::device_answer)
    std::optional<uint64_t> delta_base; // code the answer against it (push_msg::wants_delta)
    uint32_t samples = 0;       // counted in stats, taken back if it is not used
    double loss_sum = 0;
  };
  std::unordered_map<uint64_t, open_push> open; // by ticket
  uint64_t next_ticket = 0;
  replica_table replicas; // each replica's actor, membership and pushes taken
  store_stats stats;
  store_config settings; // shard, interval, optimizer; no buffers
  checkpoint_writer_actor writer; // where periodic parts and snapshots go; may be none
  uint64_t epoch = 0;
  uint64_t epoch_first_round = 0;
  uint64_t rounds_since_checkpoint = 0;
  bool checkpoint_due = false; // a closed round made a periodic checkpoint due
  uint64_t rounds_since_snapshot = 0;
  bool snapshot_due = false; // a closed round made a snapshot due
  // --wire=int8 under sync: a snapshot's or checkpoint's part waits here for
  // the replicas' residuals, which their pushes of the part's round carry
  // (the answers before said cut), and goes once that round has closed.
  struct residual_cut {
    checkpoint_part part;
    bool checkpoint = false; // else a snapshot
    std::map<uint32_t, shared_floats> residuals; // by replica
    std::set<uint32_t> pushed; // the replicas whose push of the part's round came
  };
  std::optional<residual_cut> cut;
  // Who waits for a round to close (await_atom), with that round.
  std::vector<std::pair<uint64_t, caf::typed_response_promise<uint64_t>>> awaited;
  // A graceful stop (push_intake.hpp): pushes of rounds from halt_at on
  // wait here with the promises of their answers, and the shard's part
  // comes once every round before halt_at has closed.
  struct held_push {
    push_msg push;
    caf::typed_response_promise<params_msg> promise;
    caf::actor_addr sender;
  };
  std::optional<uint64_t> halt_at;
  std::vector<held_push> held;
  std::optional<caf::typed_response_promise<checkpoint_part>> halted_part;
  // Clipping by global norm (--global-clipnorm). Under a policy with rounds
  // the gate holds each step until every shard's sum of squares is in, and
  // the store's calls after it; `send_sum` hands the shard's own sum of a
  // round to the actor, which sends it to the siblings. Without rounds each
  // push carries its gradient's norm, `push_norm` while the policy takes it.
  std::unique_ptr<clip_gate> gate;
  std::function<void(uint64_t round, const square_sum& own)> send_sum;
  double push_norm = -1;
  // The store's shards, this one's siblings among them (peers_atom), those
  // seen down, and this shard's sums of rounds closed before they were known.
  struct sibling_shards {
    std::vector<caf::actor> shards; // by shard index; empty until the coordinator tells
    std::vector<bool> down;
    std::map<uint64_t, square_sum> unsent;
  };
  sibling_shards siblings;

  // Whether a clipped step waits for its norm: the actor takes no message
  // but the sums, and the store's calls wait behind it.
  bool waits_for_norm() const { return gate && gate->busy(); }

  // Whether next_push_round is kept: with respawns that go on from there.
  bool tracks_next_pushes() const {
    return traits.resumes_pushes && settings.on_replica_loss == replica_loss_action::respawn;
  }

  // Whether a snapshot or checkpoint waits for the replicas' residuals
  // (residual_cut): --wire=int8 with a writer, under sync without backups.
  bool cuts_with_residuals() const {
    return settings.wire == float_codec::int8 && traits.replicas_wait_for_rounds && writer;
  }

  // Whether the round closing now makes a snapshot or checkpoint due
  // (round_closed counts it after the round's answers).
  bool cut_due_at_close() const {
    return (settings.checkpoint_every > 0 && rounds_since_checkpoint + 1 >= settings.checkpoint_every)
           || (settings.snapshot_every > 0 && rounds_since_snapshot + 1 >= settings.snapshot_every);
  }

  // The store device, or null.
  const std::shared_ptr<backend>& device() const { return buffers->device(); }

  // This shard's part of a checkpoint: a periodic one (mid-epoch, as far as
  // the shard knows), or the one the coordinator asks for once an epoch is
  // complete.
  checkpoint_part part(bool epoch_complete);

  // An answer: this shard's range at the current version, or `steps_back`
  // versions before it (a delayed policy's), as a view where it lives (the
  // host, or the device if the pusher asked for device memory) or else a
  // host copy.
  // The host values of an answer to a push are rounded to the run's codec
  // (--wire): replicas compute on them.
  // A push that asked for it gets its answer coded against the version it
  // holds, `delta_base` (answer_bases.hpp).
  params_msg answer_value(uint64_t staleness, uint64_t steps_back = 0,
                          bool device_answer = false,
                          std::optional<uint64_t> delta_base = std::nullopt);

  // The current parameters as the shard keeps them (fp32 masters), for the
  // coordinator: epoch orders (each replica rounds them on arrival) and the
  // run's result.
  params_msg masters_value() { return value_of(0, 0, false); }

  // Reads the last step's verdict on the device (device_verdicts::check);
  // none on the host.
  caf::error check_device_verdict() { return verdicts ? verdicts->check() : caf::none; }

  // The shard's own checks of a push, which leave push.gradient ready for
  // the policy, in the memory the shard steps in: the size of its slice,
  // memory the shard can read (a device shard first copies a host gradient,
  // or one on another device of its kind, to its own), and finite values (a
  // gradient in device memory comes checked by the replica that computed it:
  // see device_floats; one in host memory may come proven finite by its
  // replica: see push_msg). Whether its replica and round fit is the
  // policy's call (on_push).
  caf::error take_gradient(push_msg& push);

  // What the policy asks of the store (store_port).
  void apply_step(const float* gradient, float lr_scale) override;
  void apply_weighted_step(const std::vector<weighted_gradient>& terms) override;
  void answer(uint64_t ticket) override { answer_from(ticket, 0); }
  void answer_from(uint64_t ticket, uint64_t steps_back) override;
  void refuse_open(troupe_errc code, const std::string& reason) override;
  void refuse(uint64_t ticket, troupe_errc code, const std::string& reason) override;
  void answer_unused(uint64_t ticket) override;
  // The parameters at `wanted`: the current version, or the one before
  // while the buffers still hold it (on the host); else an error.
  caf::expected<params_msg> answer_at(uint64_t wanted);
  // Counts a closed round towards the next periodic checkpoint, which the
  // actor sends once the policy returned, and answers who awaited it.
  void round_closed() override;

private:
  // answer_value before the rounding.
  params_msg value_of(uint64_t staleness, uint64_t steps_back, bool device_answer);

  // The calls of store_port as they run once no clipped step waits.
  void answer_now(uint64_t ticket, uint64_t steps_back);
  void refuse_open_now(troupe_errc code, const std::string& reason);
  void refuse_now(uint64_t ticket, troupe_errc code, const std::string& reason);
  void round_closed_now();

  // Runs `op` now, or behind the clipped steps that wait (clip_gate).
  void in_order(std::function<void()> op);

  // A clipped step with `gradient` (owned: the round's mean, or a push's
  // gradient), at the learning rate times `lr_scale`: through the gate
  // under a policy with rounds, else scaled by the push's norm at once.
  void clipped_step(std::vector<float> gradient, float lr_scale);

  // Takes a push's samples and loss back out of the stats.
  void take_back(const open_push& push);

  // A gradient in device memory: checked there by its replica (on this
  // device), or copied here from another device of this kind.
  caf::error take_device_gradient(push_msg& push);

  // `count` floats from `source` (host memory, or another device's once
  // `ready` fired), copied to this shard's device, so that the policy sees
  // gradients here only. A copy from another device finishes before the
  // pusher gets its buffer back (it is free once the returned view replaces
  // the original); a host source is read before copy_to_device returns.
  shared_floats copy_here(const float* source, size_t count, const device_event* ready,
                          bool from_device);

  // Refuses a host gradient read off the wire malformed, or in another codec
  // than the run's (--wire).
  caf::error check_codec(const push_msg& push) const;

  // Refuses a gradient with NaN or Inf, read where it is now.
  caf::error check_finite(const push_msg& push) const;

  // Runs an optimizer step over `terms` on the shard's buffers.
  template <class Step>
  void step(const std::vector<weighted_gradient>& terms, Step run);
};

} // namespace troupe::detail
