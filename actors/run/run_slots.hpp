// What the coordinator tracks of each replica and each store shard: one slot
// per thing, holding its actor, where it runs and how it stands.
#pragma once

#include <cstdint>
#include <optional>
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

/// --wire=int8: what a moving replica's old actor handed over (its residual
/// from before its last push, of store round `last_push`, and now), and the
/// new actor's order while that answer is awaited.
struct residual_handover {
  bool awaited = false;
  std::optional<epoch_order> order; // held until the answer came
  uint64_t last_push = UINT64_MAX;
  shared_floats before;
  shared_floats now;

  /// The residual to go on from at store round `round`; none (zeros) when
  /// the old actor went past it.
  shared_floats at(uint64_t round) const {
    if (last_push == round)
      return before;
    return last_push == UINT64_MAX || last_push < round ? now : shared_floats{};
  }
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
  residual_handover handover; // --wire=int8, while it moves
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
