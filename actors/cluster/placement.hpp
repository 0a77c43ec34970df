// Where a run's store and replicas live and how to spawn them there: in this
// process, or on node programs through CAF's remote spawn after a handshake.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <caf/expected.hpp>
#include <caf/fwd.hpp>

#include "actors/fit_options.hpp"
#include "actors/variable_store.hpp"
#include "messages/interfaces.hpp"
#include "model/data/dataset.hpp"

namespace troupe {

/// Spawns replica `config.index` where it belongs.
using replica_spawner =
  std::function<caf::expected<replica_actor>(const replica_config&, const store_actor&)>;

/// Spawns the variable store where it belongs.
using store_spawner = std::function<caf::expected<store_actor>(store_config)>;

/// Says how to spawn the store and each replica, and where they run (for messages).
struct placement {
  store_spawner spawn_store;
  std::string store_place;                 // "this process", "node H:P"
  replica_spawner spawn_replica;
  std::vector<std::string> replica_places; // "cpu", "node H:P (cpu)"
};

/// Connects to every node the options name (handshake included; a replica
/// node is linked directly to a store node) and returns the spawners; local
/// spawns where no node is named. `train` serves local replicas. The
/// spawners refer to `system`, which must outlive them.
caf::expected<placement> make_placement(caf::actor_system& system, const fit_options& opts,
                                        const std::vector<std::string>& devices,
                                        std::shared_ptr<const dataset> train);

} // namespace troupe
