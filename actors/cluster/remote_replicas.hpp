// The replicas this node runs for remote coordinators: the actor type CAF's
// remote spawn creates, and the list a node stops at shutdown (remote-spawned
// actors are neither linked to nor monitored by their spawner).
#pragma once

#include <caf/fwd.hpp>


namespace troupe::detail {

/// Names the actor type nodes register for CAF's remote spawn; its arguments
/// are (replica_config, store_actor).
constexpr const char* remote_replica_type = "troupe.replica";

/// Lets other nodes spawn replicas here (detached, data from the job's
/// data_dir, loaded once per process), and remembers each one.
void add_replica_actor_type(caf::actor_system_config& config);

/// Makes replica `index` of every job this node runs take `factor` times its
/// compute per step (the node's --slow-replica), whatever the coordinator
/// asked for it.
void slow_remote_replica(uint32_t index, float factor);

/// Sends every replica spawned here by other nodes an exit (node shutdown).
void stop_remote_replicas();

} // namespace troupe::detail
