// A replica's pushes to store shards in other processes of its host go
// through lanes (actors/cluster/host_lanes.hpp) where its process has them.
#pragma once

#include "actors/replica/replica_state.hpp"

namespace troupe::detail {

/// Asks each store shard in another process of this host for a lane, where
/// this process has lanes: its pushes to that shard take the lane once it
/// is open, the middleman before and wherever a shard refuses.
void open_push_lanes(replica_pointer self);

} // namespace troupe::detail
