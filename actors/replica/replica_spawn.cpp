// Spawning a replica: here from its setup, or on a node from the job
// description alone, where a job the node cannot run still answers why.
#include "actors/replica/replica.hpp"

#include <cstdio>

#include <caf/all.hpp>

#include "actors/replica/replica_setup.hpp"
#include "actors/replica/replica_state.hpp"
#include "actors/runtime/node_fault.hpp"
#include "messages/errors.hpp"

namespace troupe::detail {

namespace {

// A replica whose job this node cannot run: it stays up to answer with the
// reason. Ending at once would lose it, as a monitor that reaches an actor
// already gone only reports exit_reason::unknown. It ends once it has told,
// or when its store is gone (nobody will ask then).
replica_actor::behavior_type failed_replica(replica_pointer self, caf::error reason,
                                            const std::vector<store_actor>& shards) {
  for (const auto& shard : shards)
    self->monitor(shard);
  self->set_down_handler([self, reason](caf::down_msg&) { self->quit(reason); });
  return {
    [self, reason](epoch_atom, epoch_order&) -> caf::result<replica_report> {
      self->quit(reason);
      return reason;
    },
    [self, reason](ready_atom) -> caf::result<uint32_t> {
      self->quit(reason);
      return reason;
    },
    [reason](residual_atom, uint64_t) -> caf::result<shared_floats> { return reason; },
    [self, reason](residual_atom) -> caf::result<uint64_t, shared_floats, shared_floats> {
      self->quit(reason);
      return reason;
    },
    [](tick_atom) {},
  };
}

// What CAF's remote spawn runs on a node: the same replica, built from the
// job description alone. A job the node cannot run is logged here and told
// to the spawner, which asks every remote replica whether it is ready.
replica_actor::behavior_type remote_replica(replica_pointer self, replica_config config,
                                            std::vector<store_actor> shards) {
  auto setup = node_refuses_replicas()
                 ? caf::expected<std::shared_ptr<replica_setup>>{make_troupe_error(
                   troupe_errc::bad_config, "this node refuses replicas (--fault=refuse@R)")}
                 : make_replica_setup(config, shards, nullptr, {}, self->system().node());
  if (!setup) {
    auto reason = setup.error();
    std::fprintf(stderr, "troupe node: replica %u of %u on %s cannot start: %s\n",
                 config.index, config.replicas, config.device.c_str(),
                 describe(reason).c_str());
    return failed_replica(self, std::move(reason), shards);
  }
  std::fprintf(stderr, "troupe node: replica %u of %u on %s started\n", config.index,
               config.replicas, config.device.c_str());
  self->attach_functor([index = config.index](const caf::error& reason) {
    std::fprintf(stderr, "troupe node: replica %u stopped: %s\n", index,
                 reason ? describe(reason).c_str() : "done");
  });
  return replica_behavior(self, std::move(*setup));
}

} // namespace

caf::expected<replica_actor> spawn_replica(caf::actor_system& system,
                                           const replica_config& config,
                                           std::vector<store_actor> shards,
                                           std::shared_ptr<const data_source> train,
                                           const backend_wrapper& wrap) {
  auto setup = make_replica_setup(config, std::move(shards), std::move(train), wrap,
                                  system.node());
  if (!setup)
    return setup.error();
  if (replica_needs_own_thread(config))
    return system.spawn<caf::detached>(replica_behavior, std::move(*setup));
  return system.spawn(replica_behavior, std::move(*setup));
}

bool replica_needs_own_thread(const replica_config& config) {
  return config.pin_core || config.device != "cpu" || config.slowdown > 1.0f;
}

caf::actor_factory remote_replica_factory() {
  return caf::make_actor_factory(remote_replica);
}

} // namespace troupe::detail
