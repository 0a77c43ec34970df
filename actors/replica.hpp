// A replica: owns one backend and its shard of the data; computes gradients
// and pushes them to the store, round after round.
#pragma once

#include <memory>

#include <caf/fwd.hpp>

#include "messages/interfaces.hpp"
#include "model/data/dataset.hpp"
#include "model/expected.hpp"

namespace troupe {

/// Spawns a replica on its own thread (detached), so its compute never stalls
/// CAF's scheduler threads. With `train` null it loads the training set from
/// config.data_dir (as a remote node does). Bad data, model or device are
/// errors here, before anything runs.
expected<replica_actor> spawn_replica(caf::actor_system& system,
                                      const replica_config& config, store_actor store,
                                      std::shared_ptr<const dataset> train);

} // namespace troupe
