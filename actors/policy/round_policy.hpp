// What the policies that reduce rounds (sync, delayed) share: the live
// replicas, the open round and the losses the survivors re-plan by, the
// checks of a push against the open round, and one round's step, the
// batch-weighted mean of its gradients summed in replica-index order.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>

#include "actors/policy/update_policy.hpp"

namespace troupe::detail {

/// Counts rounds over a set of live replicas and records each one lost.
class round_policy : public update_policy {
public:
  void on_replica_joined(uint32_t replica) override { live_.insert(replica); }
  uint64_t next_round() const override { return round_; }
  void set_next_round(uint64_t round) override { round_ = round; }

protected:
  /// Forgets a live replica and records its loss in the open round (with
  /// whether its push of that round already counts); false if it was not
  /// live. Recorded before the round may close, so that its answers carry it.
  bool forget(uint32_t replica, bool share_used);

  std::set<uint32_t> live_;
  uint64_t round_ = 0; // the open round
};

/// Refuses a push from a replica that is not in `live` (unknown_replica), for
/// a round before `open_round` (stale_round), or for a round more than
/// `rounds_ahead` past it (unexpected_round).
std::optional<push_refusal> refuse_outside_rounds(const gradient_push& push,
                                                  const std::set<uint32_t>& live,
                                                  uint64_t open_round, uint64_t rounds_ahead);

/// Refuses a second push of one replica in one round (duplicate_push).
push_refusal duplicate_push_refusal(const gradient_push& push);

/// Applies the step of one round's pushes (by replica index): the mean of
/// their gradients weighted by batch size, summed in replica order (never in
/// arrival order, so the bits never depend on timing) and fused with the
/// optimizer step; a single gradient carrying the whole round is applied as
/// it is. Applies nothing if no push has samples.
void apply_round_mean(const std::map<uint32_t, gradient_push>& pushes, store_port& store);

} // namespace troupe::detail
