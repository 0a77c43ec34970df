// A replica's push to the store's shards: each shard its slice of the
// gradient (a view of one buffer), sent ahead while the model computes for a
// shard in another process once the model has written that slice, the rest
// once the backward pass is done; then every answer, joined as it comes.
#pragma once

#include <cstddef>
#include <optional>

#include "actors/replica/replica_state.hpp"
#include "actors/replica/slices_ahead.hpp"

namespace troupe::detail {

/// Plans the slices of `push` to send ahead: to the shards the replica
/// reaches through the network, unless the run pushes at the end, in int8,
/// with gradient norms, with a straggler's delay, or with a fault due at
/// this push. None when there is nothing to send ahead.
std::optional<ahead_plan> plan_ahead(replica_pointer self, push_msg& push);

/// Sends every shard whose slice did not leave ahead its slice of `push`,
/// then waits for every shard's answer, after which the next round runs.
void push_rest(replica_pointer self, const push_msg& push);

} // namespace troupe::detail
