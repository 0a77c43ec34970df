// Deterministic delay: every gradient is K versions stale. A replica computes
// round r on the parameters of round r - K, so it does not wait while the
// store applies round r - 1 (communication overlaps compute), and the store
// still reduces each round in replica order: the bits do not depend on timing.
#pragma once

#include <map>
#include <vector>

#include "actors/policy/policy_registry.hpp"
#include "actors/policy/round_policy.hpp"

namespace troupe::detail {

/// Takes pushes for the open round and up to K rounds ahead, closes rounds in
/// order once every live replica has pushed (replica-order mean, one step),
/// and answers a push of round r with the parameters as they were when the
/// store was at round r + 1 - K: at once when that version exists (from the
/// store's history), else when the open round closes.
class delayed_policy final : public round_policy {
public:
  explicit delayed_policy(uint32_t lag) : lag_(lag < 1 ? 1 : lag) {}

  std::optional<push_refusal> on_push(gradient_push push, store_port& store) override;
  void on_replica_lost(uint32_t replica, store_port& store) override;

private:
  std::optional<push_refusal> refusal(const gradient_push& push) const;
  void close_complete_rounds(store_port& store);

  uint32_t lag_;
  std::map<uint64_t, std::map<uint32_t, gradient_push>> pending_; // by round, by replica
  struct held_answer {
    uint64_t round;
    uint64_t ticket;
  };
  std::vector<held_answer> held_; // pushes of round round_ + K: answered at the next close
};

/// Describes delayed for the registry (builtin_policies.hpp).
policy_descriptor delayed_policy_descriptor();

} // namespace troupe::detail
