// The one seam between sync and async training: an update policy decides which
// pushes it takes, when they become an optimizer step, whom the store answers
// and when a round closes. The store is written once around it and never asks
// which mode runs; what the rest of the runtime needs to know of a policy
// without building one is its descriptor (policy_registry.hpp). Plain C++
// with no actor in it, so policies are unit-tested with plain callbacks.
// How to add a policy: docs/architecture.md, "How to add a policy".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "messages/errors.hpp"
#include "messages/policy_spec.hpp"
#include "messages/protocol.hpp"
#include "model/optim/optimizer.hpp"

namespace troupe::detail {

/// Names one gradient that reached the store.
struct gradient_push {
  uint32_t replica = 0;
  uint64_t round = 0;
  uint32_t batch_size = 0;
  shared_floats gradient; // the shard's slice; empty when batch_size is 0
  uint64_t ticket = 0; // how the store finds the open request to answer
  uint64_t staleness = 0; // the store's version minus the one it was computed at
};

/// What a policy asks of the store that owns it.
class store_port {
public:
  virtual ~store_port() = default;
  /// Applies one optimizer step with this mean gradient (the shard's parameter
  /// count floats), at the learning rate times `lr_scale`.
  virtual void apply_step(const float* gradient, float lr_scale = 1.0f) = 0;
  /// Applies one optimizer step with the gradient weighted_gradient_sum(terms),
  /// fused with the step (see optimizer::apply_weighted_sum).
  virtual void apply_weighted_step(const std::vector<weighted_gradient>& terms) = 0;
  /// Answers the push behind `ticket` with the current parameters.
  virtual void answer(uint64_t ticket) = 0;
  /// Answers the push behind `ticket` with the parameters as they were
  /// `steps_back` steps ago (0: the current ones). The store keeps the
  /// policy's history_depth older versions (policy_traits); with fewer (a
  /// resumed run) it answers the oldest it has.
  virtual void answer_from(uint64_t ticket, uint64_t steps_back) = 0;
  /// Answers every push not answered yet with the error `code`, `reason`.
  virtual void refuse_open(troupe_errc code, const std::string& reason) = 0;
  /// Answers the push behind `ticket` with the error `code`, `reason`, and
  /// takes its samples and loss back out of the shard's counts: the push
  /// will not be part of a step.
  virtual void refuse(uint64_t ticket, troupe_errc code, const std::string& reason) = 0;
  /// Answers the push behind `ticket` with the current parameters without
  /// using its gradient, and takes its samples and loss back out of the
  /// shard's counts.
  virtual void answer_unused(uint64_t ticket) = 0;
  /// Tells the store that a round just closed, after its step and its answers:
  /// the store counts these for periodic checkpoints (--checkpoint-every). A
  /// policy without rounds (async) never calls it.
  virtual void round_closed() = 0;
};

/// Says why a policy refused a push: the error the pusher receives and the
/// sentence for a person.
struct push_refusal {
  troupe_errc code;
  std::string reason;
};

/// Returns the learning-rate scale of a gradient of `staleness` under
/// `settings`: 1 / max(1, staleness) with staleness_lr_rule::inverse (Zhang
/// et al., "Staleness-aware Async-SGD", IJCAI 2016), else 1.
inline float staleness_lr_scale(const policy_settings& settings, uint64_t staleness) {
  if (settings.staleness_lr != staleness_lr_rule::inverse || staleness <= 1)
    return 1.0f;
  return 1.0f / static_cast<float>(staleness);
}

/// What a policy tells the store for its answers and stats as it goes.
struct policy_report {
  /// Replicas lost so far that the survivors re-plan their epoch around
  /// (sync, delayed); every answer carries them.
  std::vector<replica_loss> losses;
  /// By replica index: rounds that closed on that replica's push (it came
  /// last: the round waited for it). Sync counts them; empty for the others.
  std::vector<uint64_t> waited_on;
  /// Late gradients answered and dropped so far (sync with backup replicas).
  uint64_t dropped = 0;
};

/// Decides when gradients become steps; the store is written once around it.
class update_policy {
public:
  virtual ~update_policy() = default;

  /// Takes a push, or refuses it and changes nothing. A taken push may apply
  /// steps, answer pushes (this one or others) and close rounds through `store`.
  virtual std::optional<push_refusal> on_push(gradient_push push, store_port& store) = 0;

  /// Adds a replica that takes part from the current round on.
  virtual void on_replica_joined(uint32_t replica) = 0;

  /// Forgets a replica that died, so no round waits for it.
  virtual void on_replica_lost(uint32_t replica, store_port& store) = 0;

  /// Hands a replica that died to the one spawned in its place
  /// (--on-replica-loss=respawn): a push of the open round the dead one
  /// made is refused through `store`, and the new one pushes it again. The
  /// default keeps nothing to forget.
  virtual void on_replica_replaced(uint32_t replica, store_port& store) {
    (void)replica;
    (void)store;
  }

  /// Returns the round the next sync push must name (async: pushes so far).
  virtual uint64_t next_round() const = 0;

  /// Continues the round count of a resumed run.
  virtual void set_next_round(uint64_t round) = 0;

  /// Returns what the policy reports so far.
  virtual const policy_report& report() const { return report_; }

protected:
  policy_report report_;
};

} // namespace troupe::detail
