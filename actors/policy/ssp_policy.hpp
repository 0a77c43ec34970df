// Bounded staleness (stale synchronous parallel, as Petuum's Bosen): gradients
// are applied on arrival as in async, but no replica runs more than K pushes
// ahead of the slowest live replica.
#pragma once

#include <map>
#include <vector>

#include "actors/policy/policy_registry.hpp"

namespace troupe::detail {

/// Applies every push at once, like async, and answers its sender unless the
/// sender is now more than `staleness` pushes ahead of the slowest live
/// replica: then the answer (the response promise) waits until the slowest
/// catches up or is lost. The factory maps staleness 0 to the sync policy.
class ssp_policy final : public update_policy {
public:
  explicit ssp_policy(const policy_settings& settings)
    : settings_(settings), staleness_(settings.staleness) {}

  std::optional<push_refusal> on_push(gradient_push push, store_port& store) override;
  void on_replica_joined(uint32_t replica) override;
  void on_replica_lost(uint32_t replica, store_port& store) override;
  uint64_t next_round() const override { return pushes_; }
  void set_next_round(uint64_t round) override { pushes_ = round; }

private:
  uint64_t slowest() const;
  void answer_those_in_bounds(store_port& store);

  policy_settings settings_;
  uint32_t staleness_;
  std::map<uint32_t, uint64_t> clocks_; // pushes taken from each live replica
  struct held_answer {
    uint32_t replica;
    uint64_t ticket;
  };
  std::vector<held_answer> held_;
  uint64_t pushes_ = 0;
};

/// Describes ssp for the registry (builtin_policies.hpp); staleness 0 is
/// lockstep, and builds the sync policy.
policy_descriptor ssp_policy_descriptor();

} // namespace troupe::detail
