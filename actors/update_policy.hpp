// The one seam between sync and async training: an update policy decides when
// pushed gradients become an optimizer step and whom the store answers. Plain
// C++ with no CAF in it, so policies are unit-tested with plain callbacks.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "model/expected.hpp"

namespace troupe {

/// Names one gradient that reached the store.
struct gradient_push {
  uint32_t replica = 0;
  uint64_t round = 0;
  uint32_t batch_size = 0;
  std::shared_ptr<const std::vector<float>> gradient; // null when batch_size is 0
  uint64_t ticket = 0; // how the store finds the open request to answer
};

/// What a policy asks of the store that owns it.
class store_port {
public:
  virtual ~store_port() = default;
  /// Applies one optimizer step with this mean gradient (parameter count floats).
  virtual void apply_step(const float* gradient) = 0;
  /// Answers the push behind `ticket` with the current parameters.
  virtual void answer(uint64_t ticket) = 0;
};

/// Says why a policy refuses a push (the store turns it into an error reply).
enum class push_refusal {
  none,
  unknown_replica,
  stale_round,
  unexpected_round,
  duplicate_push,
};

/// Decides when gradients become steps; the store is written once around it.
class update_policy {
public:
  virtual ~update_policy() = default;

  /// Tells whether a run under this policy promises the same bits for a fixed
  /// seed, whatever the timing and placement (then every node must compute the
  /// same bits: see check_handshake).
  virtual bool reproducible() const = 0;

  /// Names the policy: "sync" or "async".
  virtual std::string name() const = 0;

  /// Tells whether `push` fits the policy's state; called before on_push.
  virtual push_refusal check(const gradient_push& push) const = 0;

  /// Takes an accepted push; may apply steps and answer pushes.
  virtual void on_push(gradient_push push, store_port& store) = 0;

  /// Adds a replica that takes part from the current round on.
  virtual void on_replica_joined(uint32_t replica) = 0;

  /// Forgets a replica that died, so no round waits for it.
  virtual void on_replica_lost(uint32_t replica, store_port& store) = 0;

  /// Tells whether rounds bind every replica (sync): then a lost replica's
  /// unprocessed share is re-planned over the survivors.
  virtual bool keeps_rounds() const = 0;

  /// Tells whether `replica` has pushed in the open round.
  virtual bool has_pushed(uint32_t replica) const = 0;

  /// Returns the round the next sync push must name (async: pushes so far).
  virtual uint64_t next_round() const = 0;

  /// Continues the round count of a resumed run.
  virtual void set_next_round(uint64_t round) = 0;
};

/// Builds the policy for a mode ("sync" or "async") over `parameter_count`
/// floats. This factory is the only place that branches on the mode.
expected<std::unique_ptr<update_policy>> make_update_policy(const std::string& mode,
                                                            size_t parameter_count);

} // namespace troupe
