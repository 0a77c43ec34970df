// How a store shard exchanges its sums of squares with its siblings for
// clipping by global norm under a policy with rounds (clip_gate.hpp): one
// message to each sibling per round, sent as the round closes in the shard.
#pragma once

#include <vector>

#include <caf/fwd.hpp>

#include "actors/store/push_intake.hpp"

namespace troupe::detail {

/// Sets up the shard's clipping: the gate under a policy with rounds and
/// --global-clipnorm, and how its sums reach the siblings.
void start_norm_exchange(store_pointer self);

/// Takes the store's shards in shard order (peers_atom), monitors the
/// siblings and sends them the sums of rounds that closed before.
void take_siblings(store_pointer self, std::vector<caf::actor>& shards);

/// Takes a sibling's sum of squares of a round; the steps it completes run,
/// then what waited behind them.
void take_sibling_sum(store_pointer self, const norm_msg& sum);

/// Handles the down message of a sibling shard: the shard ends (store_lost)
/// if a step waits for a norm, or later when one would. False when `msg`
/// is not a sibling's.
bool sibling_down(store_pointer self, const caf::down_msg& msg);

} // namespace troupe::detail
