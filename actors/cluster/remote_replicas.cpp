// Registration of the remote replica type and the node's list of them.
#include "actors/cluster/remote_replicas.hpp"

#include <mutex>
#include <vector>

#include <caf/all.hpp>

#include "actors/replica.hpp"

namespace troupe {

namespace {

std::mutex remote_replicas_mutex;
std::vector<caf::actor> remote_replicas;

} // namespace

void add_replica_actor_type(caf::actor_system_config& config) {
  config.add_actor_factory(remote_replica_type,
                           [make = remote_replica_factory()](caf::actor_config& actor_cfg,
                                                             caf::message& args) {
                             // Its own thread, as spawn_replica gives local replicas.
                             actor_cfg.flags |= caf::abstract_actor::is_detached_flag;
                             auto result = make(actor_cfg, args);
                             if (result.first) {
                               std::lock_guard<std::mutex> guard{remote_replicas_mutex};
                               remote_replicas.push_back(
                                 caf::actor_cast<caf::actor>(result.first));
                             }
                             return result;
                           });
}

void stop_remote_replicas() {
  std::lock_guard<std::mutex> guard{remote_replicas_mutex};
  for (auto& replica : remote_replicas)
    caf::anon_send_exit(replica, caf::exit_reason::user_shutdown);
  remote_replicas.clear();
}

} // namespace troupe
