// --on-replica-loss=abort inside a store shard: a replica's death stops the
// policy, so no round closes without the lost replica.
#pragma once

#include <memory>
#include <string>

#include "actors/policy/update_policy.hpp"

namespace troupe::detail {

/// Follows `inner` until a replica dies; from then on it refuses every open
/// and later push with replica_lost. The coordinator ends the run on its own
/// news of the death; until its exit comes, a round closed over the
/// survivors (and a periodic checkpoint of one) would not be the run's.
class stop_on_loss final : public update_policy {
public:
  stop_on_loss(std::unique_ptr<update_policy> inner, uint32_t shard)
    : inner_(std::move(inner)), shard_(shard) {}

  std::optional<push_refusal> on_push(gradient_push push, store_port& store) override;
  void on_replica_joined(uint32_t replica) override { inner_->on_replica_joined(replica); }
  void on_replica_lost(uint32_t replica, store_port& store) override;
  void on_replica_replaced(uint32_t replica, store_port& store) override {
    inner_->on_replica_replaced(replica, store);
  }
  uint64_t next_round() const override { return inner_->next_round(); }
  void set_next_round(uint64_t round) override { inner_->set_next_round(round); }
  const policy_report& report() const override { return inner_->report(); }

private:
  std::unique_ptr<update_policy> inner_;
  uint32_t shard_;
  std::string stopped_; // why, once a replica died
};

} // namespace troupe::detail
