// A replica: owns one backend and its shard of the data; computes gradients
// and pushes them to the store, round after round.
#pragma once

#include <memory>
#include <vector>

#include <caf/expected.hpp>
#include <caf/actor_factory.hpp>
#include <caf/fwd.hpp>

#include "actors/config/backend_wrapper.hpp"
#include "messages/interfaces.hpp"
#include "model/data/dataset.hpp"

namespace troupe::detail {

/// Spawns a replica: on CAF's scheduler threads, or on a thread of its own
/// where replica_needs_own_thread says so. With `train` null it loads the training set from
/// config.data_dir (as a remote node does). Bad data, model or device are
/// errors here (bad_data, bad_config, device_failure), before anything runs.
/// `wrap`, if set, wraps the replica's backend (a test hook).
caf::expected<replica_actor> spawn_replica(caf::actor_system& system,
                                           const replica_config& config,
                                           std::vector<store_actor> shards,
                                           std::shared_ptr<const data_source> train,
                                           const backend_wrapper& wrap = {});

/// Tells whether a replica runs on a thread of its own (detached) rather
/// than on CAF's scheduler threads: when it is pinned to a core, when it
/// drives a GPU (it waits for the device inside a step) and when it is
/// slowed on purpose (it sleeps inside a step). A CPU replica otherwise
/// computes on a scheduler thread, one per core, so the store's shards run
/// on the same threads in the time it waits, without a thread wake-up per
/// message.
bool replica_needs_own_thread(const replica_config& config);

/// Returns CAF's factory for the replica a node spawns for a remote
/// coordinator (arguments: replica_config, and the store's shards in order as a
/// std::vector<store_actor>): it loads the data from
/// the job's data_dir (once per process) and logs its start, its end and a
/// setup it cannot run. actors/cluster/remote_replicas.hpp registers it.
caf::actor_factory remote_replica_factory();

} // namespace troupe::detail
