// A lost replica's respawn (--on-replica-loss=respawn): a new actor in its
// place, on a live node or here, that recomputes the lost share of the open
// round from that round's parameters, so the run's bits do not change.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "actors/run/epoch_phases.hpp"

namespace troupe::detail {

/// What placing a replica's new actor found: the actor, or (empty) no place
/// left, with the places it tried and why they failed.
struct spawn_outcome {
  std::optional<replica_actor> actor;
  std::string tried;
  bool failed_here = false; // this process could not host it: nothing to wait for
};

/// Spawns a new actor for replica `index` (not yet in its slot): on node
/// `first` if given, else (or when that node turns out to be gone) on the
/// live node hosting the fewest replicas, then the next; here for a local
/// run or with --respawn=anywhere once no node is left.
spawn_outcome spawn_in_place(coordinator_pointer self, size_t index,
                             std::optional<size_t> first);

/// Spawns a replica in the place of replica `index`, lost as `what` says
/// (for `reason`; `node_lost`: with its node): on the live node hosting the fewest
/// replicas (here for a local run, or with --respawn=anywhere once no node
/// is left), registered with every shard (each forgets the dead one's push
/// of the open round), then ordered the rest of the epoch from the open
/// round. Fails the run when nothing can host it, when the shards disagree
/// on the round, or when it is lost a third time in one round.
void respawn_replica(coordinator_pointer self, size_t index, const std::string& what,
                     const std::string& reason, bool node_lost);

/// Moves replica `index` onto replica node `node` (one that joined, `why`):
/// its actor stops and a new one there takes its place as a respawn does,
/// recomputing its share of the open round, so the bits do not change.
void move_replica(coordinator_pointer self, size_t index, size_t node, const std::string& why);

/// Places every respawn waiting for a join (--respawn-timeout) on `node`,
/// which just joined.
void place_parked(coordinator_pointer self, size_t node);

/// Ends the run if the respawn parked as `id` is still waiting for a join.
void respawn_deadline(coordinator_pointer self, uint64_t id);

/// Counts the live replicas each node hosts (by index into the node table).
std::vector<size_t> replicas_per_node(const coordinator_state& st);

} // namespace troupe::detail
