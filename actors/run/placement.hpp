// Where a run's store and replicas live and how to spawn them there: in this
// process, or on node programs through CAF's remote spawn after a handshake.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include <caf/expected.hpp>
#include <caf/fwd.hpp>

#include "actors/run/run_plan.hpp"
#include "actors/run/run_slots.hpp"
#include "actors/store/variable_store.hpp"
#include "messages/interfaces.hpp"
#include "model/data/dataset.hpp"

namespace troupe::detail {

/// Spawns replica `config.index` on the replica node of rank `node`
/// (node_table::replica_rank) or, with placement::here, in this process, for
/// the store's shards.
using replica_spawner = std::function<caf::expected<replica_actor>(
  size_t node, const replica_config&, const std::vector<store_actor>&)>;

/// Spawns store shard `config.shard` on the store node of rank `node`
/// (node_table::store_rank) or, with placement::here, in this process, with
/// the run's checkpoint writer, its coordinator (a shard on a node ends with
/// it) and, for shards of this process, the buffers they may share (see
/// spawn_variable_store).
using store_spawner = std::function<caf::expected<store_actor>(
  size_t node, store_config, const checkpoint_writer_actor&, const caf::actor& owner,
  shared_parameter_buffers)>;

/// Says how to spawn the store's shards and each replica; where they run is
/// the coordinator's (run_layout).
struct placement {
  static constexpr size_t here = node_table::here;
  store_spawner spawn_store;
  replica_spawner spawn_replica;
  /// Connects to a node that asked to join (handshake and links to the
  /// store nodes `store_nodes_alive` says are alive, by store rank
  /// included) and returns its clock offset; the node becomes the replica
  /// node of the next rank, which the caller records in its node table.
  std::function<caf::expected<int64_t>(const host_port&, const std::vector<bool>&)>
    add_replica_node;
};

/// Connects to every node the plan names (handshake included; a replica
/// node is linked directly to every store node), fills `layout` with the
/// nodes and each shard's and replica's starting place, and returns the
/// spawners; local spawns where no node is named. Shard k goes to store node
/// k modulo their number. `train` serves local replicas. The spawners refer
/// to `system`, which must outlive them.
caf::expected<placement> make_placement(caf::actor_system& system, const run_plan& plan,
                                        std::shared_ptr<const data_source> train,
                                        run_layout& layout);

} // namespace troupe::detail
