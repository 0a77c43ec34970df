// The one seam between sync and async training: an update policy decides which
// pushes it takes, when they become an optimizer step, whom the store answers,
// when a round closes, and what the replicas and the progress line learn of it.
// The store is written once around it and never asks which mode runs. Plain
// C++ with no actor in it, so policies are unit-tested with plain callbacks.
// How to add a policy: docs/architecture.md, "The update policy seam".
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "messages/protocol.hpp" // replica_loss, a plain struct
#include "common/expected.hpp"

namespace troupe {

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
  /// policy's history_depth() older versions; with fewer (a resumed run) it
  /// answers the oldest it has.
  virtual void answer_from(uint64_t ticket, uint64_t steps_back) = 0;
  /// Tells the store that a round just closed, after its step and its answers:
  /// the store counts these for periodic checkpoints (--checkpoint-every). A
  /// policy without rounds (async) never calls it.
  virtual void round_closed() = 0;
};

/// Names why a policy refused a push; each is the troupe_errc of the same name
/// (messages/errors.hpp) that the pusher receives.
enum class refusal_code {
  unknown_replica,
  stale_round,
  unexpected_round,
  duplicate_push,
};

/// Says why a policy refused a push: the code and the sentence for a person.
struct push_refusal {
  refusal_code code;
  std::string reason;
};

/// Tunes a policy: the knobs of the consistency dial (--staleness,
/// --backup-replicas); each policy reads the ones it has.
struct policy_settings {
  uint32_t staleness = 0;       // ssp: how many pushes a replica may be ahead;
                                // delayed: how many versions every gradient is stale
  uint32_t backup_replicas = 0; // sync: a round closes without this many
  bool staleness_lr = false;    // async, ssp: step a gradient of staleness t at lr / max(1, t)
};

/// Returns the learning-rate scale of a gradient of `staleness` under
/// `settings`: 1 / max(1, staleness) with staleness_lr (Zhang et al., "Staleness-
/// aware Async-SGD", IJCAI 2016), else 1.
inline float staleness_lr_scale(const policy_settings& settings, uint64_t staleness) {
  if (!settings.staleness_lr || staleness <= 1)
    return 1.0f;
  return 1.0f / static_cast<float>(staleness);
}

/// Decides when gradients become steps; the store is written once around it.
class update_policy {
public:
  virtual ~update_policy() = default;

  /// Names the policy, as --mode does.
  virtual std::string name() const = 0;

  /// Tells whether a run under this policy promises the same bits for a fixed
  /// seed, whatever the timing and placement (then every node must compute the
  /// same bits: see check_handshake).
  virtual bool reproducible() const = 0;

  /// Tells whether every replica waits for its round to close before it reads
  /// the parameters again, so that nobody reads a shard's range while the
  /// shard steps it. Then the shards of one process step one shared buffer in
  /// place, and replicas read it without a copy. False by default.
  virtual bool replicas_wait_for_rounds() const { return false; }

  /// Returns how many versions before the current one the store must keep
  /// for answer_from (delayed: K - 1). None by default.
  virtual uint32_t history_depth() const { return 0; }

  /// Tells whether pushes can be computed from parameters older than the
  /// current ones under this policy, so that their staleness is worth
  /// reporting (the progress line shows it then).
  virtual bool reports_staleness() const = 0;

  /// Takes a push, or refuses it and changes nothing. A taken push may apply
  /// steps, answer pushes (this one or others) and close rounds through `store`.
  virtual std::optional<push_refusal> on_push(gradient_push push, store_port& store) = 0;

  /// Adds a replica that takes part from the current round on.
  virtual void on_replica_joined(uint32_t replica) = 0;

  /// Forgets a replica that died, so no round waits for it.
  virtual void on_replica_lost(uint32_t replica, store_port& store) = 0;

  /// Returns the replicas lost so far that the survivors must re-plan their
  /// epoch around (sync); every answer carries them. None by default.
  virtual std::vector<replica_loss> losses() const { return {}; }

  /// Returns, by replica index, how many rounds closed on that replica's push
  /// (it came last: the round waited for it). Empty for policies without
  /// rounds.
  virtual std::vector<uint64_t> waited_on() const { return {}; }

  /// Returns how many late gradients were answered and dropped so far
  /// (sync with backup replicas).
  virtual uint64_t dropped() const { return 0; }

  /// Returns the round the next sync push must name (async: pushes so far).
  virtual uint64_t next_round() const = 0;

  /// Continues the round count of a resumed run.
  virtual void set_next_round(uint64_t round) = 0;
};

/// Builds the policy for a mode (one of update_policy_modes()) over
/// `parameter_count` floats (one store shard's), tuned by `settings`. This
/// factory (actors/policy/update_policy.cpp) is the only place that maps a mode to
/// behaviour.
expected<std::unique_ptr<update_policy>> make_update_policy(const std::string& mode,
                                                            size_t parameter_count,
                                                            const policy_settings& settings = {});

/// Lists the modes make_update_policy builds, for option checks and help.
const std::vector<std::string>& update_policy_modes();

} // namespace troupe
