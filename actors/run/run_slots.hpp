// What the coordinator tracks of each replica and each store shard: one slot
// per thing, holding its actor, where it runs and how it stands.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "actors/run/node_table.hpp"
#include "messages/interfaces.hpp"
#include "messages/protocol.hpp"

namespace troupe::detail {

/// Holds where an actor runs now.
struct site {
  size_t node = node_table::here; // an index into the node table, or here
  std::string text;               // for messages: "cpu", "node H:P (cpu)", "this process"
};

/// Holds one replica of the run.
struct replica_slot {
  replica_actor actor; // none between a store heal's stop and its respawn
  site where;
  bool alive = true;       // not lost for good (--on-replica-loss=continue)
  bool respawning = false; // a new actor is on its way (or parked, waiting for a join)
  // The membership epoch its actor was spawned in, which the shards watch
  // it with and its pushes and reports carry (fencing).
  uint64_t membership = 1;
  // (round, losses) of its last loss: how often it was lost in that round.
  std::pair<uint64_t, uint32_t> losses_in_round = {UINT64_MAX, 0};
  bool reported = false; // this epoch
  replica_report report; // this epoch's, once reported
  replica_report total;  // its reports summed over the run
};

/// Holds one shard of the run's store.
struct shard_slot {
  store_actor actor; // none between a store heal's stop and its respawn
  site where;
  bool alive = false;             // spawned, and no down message seen since
  std::vector<trace_span> spans;  // --trace: polled, not yet written
  bool flush_pending = false;     // a failed run still waits for its last answer
};

/// Holds where a run's actors start: its nodes and each replica's and
/// shard's place (make_placement fills it; the coordinator spawns into it).
struct run_layout {
  node_table nodes;
  std::vector<replica_slot> replicas;
  std::vector<shard_slot> shards;
};

} // namespace troupe::detail
