// Asynchronous (parameter-server) updates: each gradient is applied on arrival
// and only its sender is answered.
#pragma once

#include "actors/policy/policy_registry.hpp"

namespace troupe::detail {

/// Applies every push at once and answers its sender; the store records its
/// staleness. There are no rounds: nothing is refused and no round closes, so
/// an async run checkpoints at epoch ends only.
class async_policy final : public update_policy {
public:
  explicit async_policy(const policy_settings& settings = {}) : settings_(settings) {}
  std::optional<push_refusal> on_push(gradient_push push, store_port& store) override;
  void on_replica_joined(uint32_t) override {}
  void on_replica_lost(uint32_t, store_port&) override {}
  uint64_t next_round() const override { return pushes_; }
  void set_next_round(uint64_t round) override { pushes_ = round; }

private:
  policy_settings settings_;
  uint64_t pushes_ = 0;
};

/// Describes async for the registry (builtin_policies.hpp).
policy_descriptor async_policy_descriptor();

} // namespace troupe::detail
