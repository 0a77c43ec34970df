// Local and remote spawning of the store and the replicas.
#include "actors/run/placement.hpp"

#include <chrono>
#include <map>

#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include "actors/cluster/frame_guard.hpp"
#include "actors/cluster/handshake.hpp"
#include "actors/cluster/node_service.hpp"
#include "actors/cluster/remote_replicas.hpp"
#include "actors/replica/replica.hpp"
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

// What every placement step needs: the system, the plan, the handshake.
struct placing {
  caf::actor_system& system;
  const run_config& config;
  handshake hello;
  std::chrono::milliseconds timeout;
  // The store nodes connected so far, by address: a replica node that is
  // one too is not greeted twice.
  std::map<std::string, connected_node> store_connections = {};
};

void place_store_here(placement& out, const placing& p) {
  auto& system = p.system;
  out.store_places.assign(p.config.store_shards, "this process");
  out.store_clock_offsets.assign(p.config.store_shards, 0);
  out.store_node.assign(p.config.store_shards, placement::here);
  out.spawn_store = [&system](size_t, store_config store_opts,
                              const checkpoint_writer_actor& writer, const caf::actor&,
                              shared_parameter_buffers shared) {
    return spawn_variable_store(system, std::move(store_opts), writer, std::move(shared));
  };
}

// Refuses a shard's spawn onto a node whose frame bound it exceeds (its
// slices of the parameters and, resumed or healed, of the optimizer state):
// that node would close the connection, and the spawn only time out.
caf::error check_spawn_frame(const store_config& shard, uint64_t max_frame_size) {
  const uint64_t bytes =
    (shard.initial_parameters.size() + shard.initial_optimizer_state.size()) * sizeof(float)
    + frame_header_room;
  if (max_frame_size == 0 || bytes <= max_frame_size)
    return caf::none;
  return make_troupe_error(troupe_errc::bad_config,
                           "the shard's spawn (its slices of the parameters and the optimizer "
                           "state) takes "
                             + std::to_string(bytes) + " bytes, over the node's --max-frame-size="
                             + std::to_string(max_frame_size));
}

caf::error place_store_on_nodes(placement& out, placing& p) {
  std::vector<node_actor> store_nodes;
  std::vector<uint64_t> frame_bounds;
  std::vector<int64_t> offsets;
  for (const auto& address : p.config.store_nodes) {
    auto node = connect_to_node(p.system, address, p.config.tls, p.hello, p.timeout);
    if (!node)
      return node.error();
    p.store_connections.emplace(address.text(), *node);
    store_nodes.push_back(node->node);
    frame_bounds.push_back(node->max_frame_size);
    offsets.push_back(node->clock_offset_ns);
    out.clock_error_ns = std::max(out.clock_error_ns, node->clock_error_ns);
  }
  out.store_here = false;
  for (const auto& address : p.config.store_nodes)
    out.store_nodes.push_back(address.text());
  out.store_node_offsets = offsets;
  out.store_node_alive->assign(store_nodes.size(), true);
  for (uint32_t k = 0; k < p.config.store_shards; ++k) {
    out.store_node.push_back(k % store_nodes.size());
    out.store_places.push_back("node " + out.store_nodes[k % store_nodes.size()]);
    out.store_clock_offsets.push_back(offsets[k % offsets.size()]);
  }
  auto& system = p.system;
  out.spawn_store = [&system, store_nodes, frame_bounds, timeout = p.timeout](
                      size_t where, store_config store_opts,
                      const checkpoint_writer_actor& writer, const caf::actor& owner,
                      shared_parameter_buffers shared) -> caf::expected<store_actor> {
    if (where == placement::here)
      return spawn_variable_store(system, std::move(store_opts), writer, std::move(shared));
    if (auto err = check_spawn_frame(store_opts, frame_bounds.at(where)))
      return err;
    const auto& node = store_nodes.at(where);
    auto shard = system.middleman().remote_spawn<store_actor>(
      node.node(), remote_store_type, caf::make_message(std::move(store_opts), writer, owner),
      timeout);
    if (!shard)
      return shard.error();
    if (auto err = setup_error_of<store_stats>(system, *shard, timeout, stats_atom::value))
      return err; // e.g. a store device the node cannot open
    return shard;
  };
  return caf::none;
}

void place_replicas_here(placement& out, const placing& p, const run_plan& plan) {
  out.replica_places = plan.devices;
  out.replica_node.assign(p.config.replicas, placement::here);
  out.replica_clock_offsets.assign(p.config.replicas, 0);
}

// Connects to a replica node and links it to every store node but itself,
// so replicas there reach the shards without a detour through this process
// (which would also route the shard's handle through it, and end with it).
caf::expected<connected_node> connect_replica_node(const placing& p, const host_port& address,
                                                   const std::vector<bool>& store_node_alive) {
  const auto known = p.store_connections.find(address.text());
  auto connected = known != p.store_connections.end()
                     ? caf::expected<connected_node>{known->second}
                     : connect_to_node(p.system, address, p.config.tls, p.hello, p.timeout);
  if (!connected)
    return connected.error();
  for (size_t s = 0; s < p.config.store_nodes.size(); ++s) {
    const auto& store_address = p.config.store_nodes[s];
    if (store_address == address || (s < store_node_alive.size() && !store_node_alive[s]))
      continue;
    if (auto err = link_nodes(p.system, connected->node, store_address, p.timeout))
      return make_troupe_error(troupe_errc::bad_config,
                               "node " + address.text() + " cannot reach the store node "
                                 + store_address.text() + ": " + describe(err));
  }
  return connected;
}

caf::error place_replicas_on_nodes(placement& out, const placing& p, const run_plan& plan,
                                   std::vector<node_actor>& nodes) {
  std::vector<int64_t> node_offsets;
  for (const auto& address : p.config.nodes) {
    auto connected = connect_replica_node(p, address, *out.store_node_alive);
    if (!connected)
      return connected.error();
    nodes.push_back(connected->node);
    node_offsets.push_back(connected->clock_offset_ns);
    out.clock_error_ns = std::max(out.clock_error_ns, connected->clock_error_ns);
  }
  const auto per_node = p.config.replicas_per_node;
  for (const auto& address : p.config.nodes)
    out.replica_nodes.push_back(address.text());
  out.replica_node_offsets = node_offsets;
  for (uint32_t i = 0; i < p.config.replicas; ++i) {
    out.replica_node.push_back(i / per_node);
    out.replica_places.push_back("node " + p.config.nodes[i / per_node].text() + " ("
                                 + plan.devices[i] + ")");
    out.replica_clock_offsets.push_back(node_offsets[i / per_node]);
  }
  return caf::none;
}

// Spawns a replica on a node through CAF's remote spawn, or here.
replica_spawner make_replica_spawner(const placing& p,
                                     std::shared_ptr<const std::vector<node_actor>> nodes,
                                     std::shared_ptr<const data_source> train) {
  auto& system = p.system;
  return [&system, nodes = std::move(nodes), train, timeout = p.timeout,
          wrap = p.config.wrap_replica_backend](size_t node, const replica_config& cfg,
                                                const std::vector<store_actor>& shards)
           -> caf::expected<replica_actor> {
    if (node == placement::here)
      return spawn_replica(system, cfg, shards, train, wrap);
    auto replica = system.middleman().remote_spawn<replica_actor>(
      nodes->at(node).node(), remote_replica_type, caf::make_message(cfg, shards), timeout);
    if (!replica)
      return replica.error();
    if (auto err = setup_error_of<uint32_t>(system, *replica, timeout, ready_atom::value))
      return err;
    return replica;
  };
}

} // namespace

caf::expected<placement> make_placement(caf::actor_system& system, const run_plan& plan,
                                        std::shared_ptr<const data_source> train) {
  const run_config& c = plan.config;
  placing p{system, c,
            make_handshake(system, c.model, c.data_dir, "coordinator",
                           c.protocol_version != 0 ? c.protocol_version
                                                   : troupe_protocol_version),
            std::chrono::milliseconds(c.step_timeout_ms)};
  p.hello.same_bits_required = plan.traits.reproducible;
  placement out;
  if (c.store_nodes.empty())
    place_store_here(out, p);
  else if (auto err = place_store_on_nodes(out, p))
    return err;
  auto nodes = std::make_shared<std::vector<node_actor>>();
  if (c.nodes.empty())
    place_replicas_here(out, p, plan);
  else if (auto err = place_replicas_on_nodes(out, p, plan, *nodes))
    return err;
  out.spawn_replica = make_replica_spawner(p, nodes, std::move(train));
  // A join connects later, when the plan's config no longer lives here.
  out.add_replica_node = [&system, nodes, hello = p.hello, timeout = p.timeout, config = c,
                          alive = out.store_node_alive](
                           const host_port& address) -> caf::expected<int64_t> {
    const placing later{system, config, hello, timeout};
    auto connected = connect_replica_node(later, address, *alive);
    if (!connected)
      return connected.error();
    nodes->push_back(connected->node);
    return connected->clock_offset_ns;
  };
  return out;
}

} // namespace troupe
