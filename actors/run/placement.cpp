// Local and remote spawning of the store and the replicas.
#include "actors/run/placement.hpp"

#include <chrono>

#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include "actors/cluster/handshake.hpp"
#include "actors/cluster/node_service.hpp"
#include "actors/cluster/remote_replicas.hpp"
#include "actors/replica/replica.hpp"
#include "actors/policy/update_policy.hpp"
#include "messages/errors.hpp"

namespace troupe {

namespace {

// Asks an actor a node just spawned `question` and returns the error it
// answers with: a setup it cannot run there (device, data, model) says why
// when asked, as its down message would not carry the reason. The actor is
// told to stop then.
template <class Answer, class Handle, class Question>
caf::error setup_error_of(caf::actor_system& system, const Handle& spawned,
                          std::chrono::milliseconds timeout, Question question) {
  caf::error found;
  caf::scoped_actor self{system};
  self->request(spawned, timeout, question)
    .receive([](Answer&) {}, [&found](caf::error& err) { found = std::move(err); });
  if (found)
    caf::anon_send_exit(spawned, caf::exit_reason::user_shutdown);
  return found;
}

} // namespace

caf::expected<placement> make_placement(caf::actor_system& system, const fit_options& opts,
                                        const std::vector<std::string>& devices,
                                        std::shared_ptr<const dataset> train) {
  placement out;
  const auto timeout = std::chrono::milliseconds(opts.step_timeout_ms);
  auto hello = make_handshake(system, opts.model, opts.data_dir, "coordinator",
                              opts.protocol_version != 0 ? opts.protocol_version
                                                         : troupe_protocol_version);
  if (auto policy = make_update_policy(opts.mode, 0, policy_settings_for(opts)))
    hello.same_bits_required = (*policy)->reproducible();
  if (opts.store_nodes.empty()) {
    out.store_places.assign(opts.store_shards, "this process");
    out.store_clock_offsets.assign(opts.store_shards, 0);
    out.spawn_store = [&system](store_config store_opts, const checkpoint_writer_actor& writer,
                                const caf::actor&, shared_parameter_buffers shared) {
      return spawn_variable_store(system, std::move(store_opts), writer, std::move(shared));
    };
  } else {
    std::vector<node_actor> store_nodes;
    std::vector<int64_t> offsets;
    for (const auto& address : opts.store_nodes) {
      auto node = connect_to_node(system, address, opts.tls, hello, timeout);
      if (!node)
        return node.error();
      store_nodes.push_back(node->node);
      offsets.push_back(node->clock_offset_ns);
      out.clock_error_ns = std::max(out.clock_error_ns, node->clock_error_ns);
    }
    out.store_here = false;
    for (uint32_t k = 0; k < opts.store_shards; ++k) {
      out.store_places.push_back("node " + opts.store_nodes[k % opts.store_nodes.size()]);
      out.store_clock_offsets.push_back(offsets[k % offsets.size()]);
    }
    out.spawn_store = [&system, store_nodes, timeout](store_config store_opts,
                                                      const checkpoint_writer_actor& writer,
                                                      const caf::actor& owner,
                                                      shared_parameter_buffers)
      -> caf::expected<store_actor> {
      const auto& node = store_nodes[store_opts.shard % store_nodes.size()];
      auto shard = system.middleman().remote_spawn<store_actor>(
        node.node(), remote_store_type, caf::make_message(std::move(store_opts), writer, owner),
        timeout);
      if (!shard)
        return shard.error();
      if (auto err = setup_error_of<store_stats>(system, *shard, timeout, stats_atom::value))
        return err; // e.g. a store device the node cannot open
      return shard;
    };
  }
  if (opts.nodes.empty()) {
    out.replica_places = devices;
    out.replica_clock_offsets.assign(opts.replicas, 0);
    out.spawn_replica = [&system, train, wrap = opts.wrap_replica_backend](
                          const replica_config& cfg, const std::vector<store_actor>& shards) {
      return spawn_replica(system, cfg, shards, train, wrap);
    };
  } else {
    std::vector<node_actor> nodes;
    std::vector<int64_t> node_offsets;
    for (const auto& address : opts.nodes) {
      auto connected = connect_to_node(system, address, opts.tls, hello, timeout);
      if (!connected)
        return connected.error();
      auto node = &connected->node;
      node_offsets.push_back(connected->clock_offset_ns);
      out.clock_error_ns = std::max(out.clock_error_ns, connected->clock_error_ns);
      // Store shards on other nodes: link each directly first, so replicas
      // here reach them without a detour through this process (which would
      // also route the shard's handle through it, and end with it).
      for (const auto& store_address : opts.store_nodes) {
        if (store_address == address)
          continue;
        if (auto err = link_nodes(system, *node, store_address, timeout))
          return make_troupe_error(troupe_errc::bad_config,
                                   "node " + address + " cannot reach the store node "
                                     + store_address + ": " + describe(err));
      }
      nodes.push_back(*node);
    }
    for (uint32_t i = 0; i < opts.replicas; ++i) {
      out.replica_places.push_back("node " + opts.nodes[i / opts.replicas_per_node] + " ("
                                   + devices[i] + ")");
      out.replica_clock_offsets.push_back(node_offsets[i / opts.replicas_per_node]);
    }
    const auto per_node = opts.replicas_per_node;
    out.spawn_replica = [&system, nodes, per_node, timeout](
                          const replica_config& cfg, const std::vector<store_actor>& shards)
      -> caf::expected<replica_actor> {
      const auto& node = nodes[cfg.index / per_node];
      auto replica = system.middleman().remote_spawn<replica_actor>(
        node.node(), remote_replica_type, caf::make_message(cfg, shards), timeout);
      if (!replica)
        return replica.error();
      if (auto err = setup_error_of<uint32_t>(system, *replica, timeout, ready_atom::value))
        return err;
      return replica;
    };
  }
  return out;
}

} // namespace troupe
