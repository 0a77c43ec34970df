// Synchronous (MirroredStrategy) updates: one step per round, built from every
// live replica's gradient in replica order, the same answer to everyone.
#pragma once

#include <map>
#include <set>
#include <vector>

#include "actors/policy/policy_registry.hpp"
#include "actors/policy/round_policy.hpp"

namespace troupe::detail {

/// Holds each round's pushes until every live replica has pushed, then reduces
/// them in replica-index order weighted by batch size (never in arrival
/// order), applies one step, answers all of them and closes the round. Keeps
/// the replicas lost so far, so that the survivors re-plan alike. With b
/// backup replicas a round closes on its first live - b pushes (at least
/// one), and a push for a closed round is answered with the current
/// parameters and dropped: no longer reproducible, as arrival decides.
class sync_policy final : public round_policy {
public:
  explicit sync_policy(uint32_t backup_replicas = 0) : backups_(backup_replicas) {}

  std::optional<push_refusal> on_push(gradient_push push, store_port& store) override;
  void on_replica_lost(uint32_t replica, store_port& store) override;
  void on_replica_replaced(uint32_t replica, store_port& store) override;

private:
  std::optional<push_refusal> refusal(const gradient_push& push) const;
  void close_round_if_complete(store_port& store);

  std::map<uint32_t, gradient_push> pushed_; // this round's pushes, by replica
  std::set<uint32_t> last_closed_; // replicas whose pushes closed the round before
  std::set<uint32_t> owed_;        // replaced ones whose repeat of that round is answered unused
  uint32_t backups_ = 0;
};

/// Describes sync for the registry (builtin_policies.hpp).
policy_descriptor sync_policy_descriptor();

} // namespace troupe::detail
