// A store heal's respawn of the store's shards: each on its store node
// while alive, else on the next live one, else here with --respawn=anywhere.
#pragma once

#include <optional>
#include <string>

#include "actors/run/epoch_phases.hpp"

namespace troupe::detail {

/// Ends the run: the store was lost, as `text` says.
void fail_store(coordinator_pointer self, const std::string& text);

/// Ends the run: a replica lost the store (`reason`, its words), which the
/// error names with every shard's place (coordinator.cpp).
void fail_store_lost_by_replica(coordinator_pointer self, const std::string& reason);

/// Spawns every shard again from `start`; the shards that moved, as
/// "shard K on PLACE, ..." (empty: none), or nothing when the run failed.
std::optional<std::string> respawn_store(coordinator_pointer self, const store_start& start,
                                         const std::string& what);

} // namespace troupe::detail
