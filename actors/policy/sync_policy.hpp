// Synchronous (MirroredStrategy) updates: one step per round, built from every
// live replica's gradient in replica order, the same answer to everyone.
#pragma once

#include <map>
#include <set>
#include <vector>

#include "actors/policy/update_policy.hpp"

namespace troupe {

/// Holds each round's pushes until every live replica has pushed, then reduces
/// them in replica-index order weighted by batch size (never in arrival
/// order), applies one step, answers all of them and closes the round. Keeps
/// the replicas lost so far, so that the survivors re-plan alike. With b
/// backup replicas a round closes on its first live - b pushes (at least
/// one), and a push for a closed round is answered with the current
/// parameters and dropped: no longer reproducible, as arrival decides.
class sync_policy final : public update_policy {
public:
  explicit sync_policy(size_t parameter_count = 0, uint32_t backup_replicas = 0);

  std::string name() const override { return "sync"; }
  bool reproducible() const override { return backups_ == 0; }
  // A late replica still reads the parameters while its round closes without it.
  bool replicas_wait_for_rounds() const override { return backups_ == 0; }
  uint64_t dropped() const override { return dropped_; }
  std::vector<uint64_t> waited_on() const override { return waited_on_; }
  bool reports_staleness() const override { return false; } // always 0: rounds wait
  std::optional<push_refusal> on_push(gradient_push push, store_port& store) override;
  void on_replica_joined(uint32_t replica) override;
  void on_replica_lost(uint32_t replica, store_port& store) override;
  std::vector<replica_loss> losses() const override { return losses_; }
  uint64_t next_round() const override { return round_; }
  void set_next_round(uint64_t round) override { round_ = round; }

private:
  std::optional<push_refusal> refusal(const gradient_push& push) const;
  void close_round_if_complete(store_port& store);

  std::set<uint32_t> live_;
  std::map<uint32_t, gradient_push> pushed_; // this round's pushes, by replica
  std::vector<replica_loss> losses_;
  uint64_t round_ = 0;
  uint32_t backups_ = 0;
  uint64_t dropped_ = 0;
  std::vector<uint64_t> waited_on_;
};

} // namespace troupe
