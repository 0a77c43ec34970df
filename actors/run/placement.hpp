// Where a run's store and replicas live and how to spawn them there: in this
// process, or on node programs through CAF's remote spawn after a handshake.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <caf/expected.hpp>
#include <caf/fwd.hpp>

#include "actors/run/run_plan.hpp"
#include "actors/store/variable_store.hpp"
#include "messages/interfaces.hpp"
#include "model/data/dataset.hpp"

namespace troupe {

/// Spawns replica `config.index` on replica node `node` (an index into
/// placement::replica_nodes) or, with placement::here, in this process, for
/// the store's shards.
using replica_spawner = std::function<caf::expected<replica_actor>(
  size_t node, const replica_config&, const std::vector<store_actor>&)>;

/// Spawns store shard `config.shard` on store node `node` (an index into
/// placement::store_nodes) or, with placement::here, in this process, with
/// the run's checkpoint writer, its coordinator (a shard on a node ends with
/// it) and, for shards of this process, the buffers they may share (see
/// spawn_variable_store).
using store_spawner = std::function<caf::expected<store_actor>(
  size_t node, store_config, const checkpoint_writer_actor&, const caf::actor& owner,
  shared_parameter_buffers)>;

/// Says how to spawn the store's shards and each replica, and where they run
/// (for messages).
struct placement {
  store_spawner spawn_store;
  bool store_here = true;                  // every shard in this process
  std::vector<std::string> store_places;   // per shard: "this process", "node H:P"
  std::vector<std::string> store_nodes;    // "H:P" of each store node; none: all here
  std::vector<int64_t> store_node_offsets; // each store node's clock offset
  std::vector<size_t> store_node;          // per shard: its node now, or here
  // By store node: not known dead. Joins link only to live ones.
  std::shared_ptr<std::vector<bool>> store_node_alive = std::make_shared<std::vector<bool>>();
  replica_spawner spawn_replica;
  /// Connects to a node that asked to join (handshake and links to the
  /// store nodes included) and returns its clock offset; the caller appends
  /// it and the node's address to replica_node_offsets and replica_nodes.
  std::function<caf::expected<int64_t>(const host_port&)> add_replica_node;
  std::vector<std::string> replica_nodes;  // "H:P" of each replica node; none: all here
  std::vector<int64_t> replica_node_offsets; // each replica node's clock offset
  std::vector<size_t> replica_node;        // per replica: its node at the start, or here
  std::vector<std::string> replica_places; // "cpu", "node H:P (cpu)"
  static constexpr size_t here = SIZE_MAX;
  // Add to a replica's or shard's steady-clock times to get this process's
  // (0 here; from the handshake for nodes), within clock_error_ns.
  std::vector<int64_t> replica_clock_offsets;
  std::vector<int64_t> store_clock_offsets;
  int64_t clock_error_ns = 0;
};

/// Connects to every node the plan names (handshake included; a replica
/// node is linked directly to every store node) and returns the spawners;
/// local spawns where no node is named. Shard k goes to store node k modulo
/// their number. `train` serves local replicas. The spawners refer to
/// `system`, which must outlive them.
caf::expected<placement> make_placement(caf::actor_system& system, const run_plan& plan,
                                        std::shared_ptr<const data_source> train);

} // namespace troupe
