// Registration of the remote replica type and the node's list of them.
#include "actors/cluster/remote_replicas.hpp"

#include <mutex>
#include <vector>

#include <caf/all.hpp>

#include "actors/replica/replica.hpp"
#include "actors/runtime/known_peers.hpp"
#include "actors/runtime/node_fault.hpp"
#include "actors/runtime/spawn_arguments.hpp"

namespace troupe::detail {

namespace {

std::mutex remote_replicas_mutex;
std::vector<caf::actor> remote_replicas;
uint32_t slow_index = 0;
float slow_factor = 1.0f; // 1: no replica is slowed here

} // namespace

void add_replica_actor_type(caf::actor_system_config& config) {
  // A handle to an actor that no longer exists arrives as null; one on a
  // node this node never greeted could never be reached (known_peers.hpp).
  auto check = [](const replica_config&, const std::vector<store_actor>& shards) {
    for (size_t k = 0; k < shards.size(); ++k) {
      if (!shards[k])
        return "store shard " + std::to_string(k) + " of its job no longer exists";
      if (!greeted_node(shards[k].node()))
        return "store shard " + std::to_string(k) + " of its job is on a node this node "
               + "has not greeted";
    }
    return shards.empty() ? std::string{"its job names no store shard"} : std::string{};
  };
  auto adjust = [](caf::actor_config& actor_cfg, replica_config& job,
                   std::vector<store_actor>&) {
    std::lock_guard<std::mutex> guard{remote_replicas_mutex};
    if (slow_factor != 1.0f && job.index == slow_index)
      job.slowdown = slow_factor;
    const node_fault fault = planned_node_fault();
    job.fault_signal = fault.signal;
    job.fault_round = fault.round;
    // The thread spawn_replica gives a local replica.
    if (replica_needs_own_thread(job))
      actor_cfg.flags |= caf::abstract_actor::is_detached_flag;
  };
  auto make = checked_actor_factory<replica_config, std::vector<store_actor>>(
    remote_replica_type, check, adjust, remote_replica_factory());
  config.add_actor_factory(remote_replica_type, [make](caf::actor_config& actor_cfg,
                                                      caf::message& args) {
    auto result = make(actor_cfg, args);
    if (result.first) {
      std::lock_guard<std::mutex> guard{remote_replicas_mutex};
      remote_replicas.push_back(caf::actor_cast<caf::actor>(result.first));
    }
    return result;
  });
}

void slow_remote_replica(uint32_t index, float factor) {
  std::lock_guard<std::mutex> guard{remote_replicas_mutex};
  slow_index = index;
  slow_factor = factor;
}

void stop_remote_replicas() {
  std::lock_guard<std::mutex> guard{remote_replicas_mutex};
  for (auto& replica : remote_replicas)
    caf::anon_send_exit(replica, caf::exit_reason::user_shutdown);
  remote_replicas.clear();
}

} // namespace troupe::detail
