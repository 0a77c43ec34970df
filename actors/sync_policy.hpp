// Synchronous (MirroredStrategy) updates: one step per round, built from every
// live replica's gradient in replica order, the same answer to everyone.
#pragma once

#include <map>
#include <set>
#include <vector>

#include "actors/update_policy.hpp"

namespace troupe {

/// Holds each round's pushes until every live replica has pushed, then reduces
/// them in replica-index order weighted by batch size (never in arrival
/// order), applies one step and answers all of them.
class sync_policy final : public update_policy {
public:
  explicit sync_policy(size_t parameter_count);

  bool reproducible() const override { return true; }

  std::string name() const override { return "sync"; }
  push_refusal check(const gradient_push& push) const override;
  void on_push(gradient_push push, store_port& store) override;
  void on_replica_joined(uint32_t replica) override;
  void on_replica_lost(uint32_t replica, store_port& store) override;
  bool keeps_rounds() const override { return true; }
  bool has_pushed(uint32_t replica) const override { return pushed_.count(replica) > 0; }
  uint64_t next_round() const override { return round_; }
  void set_next_round(uint64_t round) override { round_ = round; }

private:
  void close_round_if_complete(store_port& store);

  std::set<uint32_t> live_;
  std::map<uint32_t, gradient_push> pushed_; // this round's pushes, by replica
  std::vector<float> sum_;
  uint64_t round_ = 0;
};

} // namespace troupe
