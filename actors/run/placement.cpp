// Local and remote spawning of the store and the replicas.
#include "actors/run/placement.hpp"

#include <chrono>
#include <map>
#include <set>
#include <utility>

#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include "actors/cluster/frame_guard.hpp"
#include "actors/cluster/handshake.hpp"
#include "actors/cluster/node_service.hpp"
#include "actors/cluster/watched_request.hpp"
#include "actors/cluster/remote_replicas.hpp"
#include "actors/replica/replica.hpp"
#include "messages/errors.hpp"

namespace troupe::detail {

namespace {

// Spawns an actor of type `name` on the node of `node` and asks it
// `question`: a setup it cannot run there (device, data, model) answers with
// why, as its down message would not carry the reason; it is told to stop
// then. Both waits end when the node's link is lost, and errors name `what`.
template <class Answer, class Handle, class Question>
caf::expected<Handle> spawn_on_node(caf::actor_system& system, const node_actor& node,
                                    const std::string& name, caf::message args,
                                    std::chrono::milliseconds timeout, const std::string& what,
                                    Question question) {
  auto spawned = remote_spawn_watching<Handle>(system, node, name, std::move(args), timeout,
                                               "spawning " + what);
  if (!spawned)
    return spawned.error();
  auto answer = ask_watching<Answer>(system, *spawned, node, timeout, what, question);
  if (!answer) {
    caf::anon_send_exit(*spawned, caf::exit_reason::user_shutdown);
    // The actor's own reason (a device it cannot open) reads best as is.
    return answer.error();
  }
  return spawned;
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
  // The pairs of nodes linked so far, either way: a BASP connection carries
  // both directions, and a second one between the same two nodes is
  // redundant (under TLS, closing it took a coordinator's connection with it).
  std::set<std::pair<std::string, std::string>> linked = {};
};

void place_store_here(placement& out, const placing& p, run_layout& layout) {
  auto& system = p.system;
  for (auto& shard : layout.shards)
    shard.where = site{placement::here, "this process"};
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

caf::error place_store_on_nodes(placement& out, placing& p, run_layout& layout) {
  std::vector<node_actor> store_nodes;
  std::vector<uint64_t> frame_bounds;
  std::vector<std::string> store_addresses;
  auto& table = layout.nodes;
  for (const auto& address : p.config.store_nodes) {
    auto node = connect_to_node(p.system, address, p.config.tls, p.hello, p.timeout);
    if (!node)
      return node.error();
    p.store_connections.emplace(address.text(), *node);
    store_nodes.push_back(node->node);
    frame_bounds.push_back(node->max_frame_size);
    store_addresses.push_back(address.text());
    table.clock_error_ns = std::max(table.clock_error_ns, node->clock_error_ns);
    table.nodes.push_back(
      node_entry{address.text(), node->clock_offset_ns, true, store_nodes.size() - 1, {}});
  }
  // The store nodes are the table's first entries, in store rank order.
  for (size_t k = 0; k < layout.shards.size(); ++k) {
    const size_t node = k % store_nodes.size();
    layout.shards[k].where = site{node, "node " + store_addresses[node]};
  }
  auto& system = p.system;
  out.spawn_store = [&system, store_nodes, store_addresses, frame_bounds,
                     timeout = p.timeout](
                      size_t where, store_config store_opts,
                      const checkpoint_writer_actor& writer, const caf::actor& owner,
                      shared_parameter_buffers shared) -> caf::expected<store_actor> {
    if (where == placement::here)
      return spawn_variable_store(system, std::move(store_opts), writer, std::move(shared));
    if (auto err = check_spawn_frame(store_opts, frame_bounds.at(where)))
      return err;
    const auto& node = store_nodes.at(where);
    const auto what = "store shard " + std::to_string(store_opts.shard) + " on node "
                      + store_addresses.at(where);
    return spawn_on_node<store_stats, store_actor>(
      system, node, remote_store_type, caf::make_message(std::move(store_opts), writer, owner),
      timeout, what, stats_atom::value);
  };
  return caf::none;
}

void place_replicas_here(const run_plan& plan, run_layout& layout) {
  for (size_t i = 0; i < layout.replicas.size(); ++i)
    layout.replicas[i].where = site{placement::here, plan.devices[i]};
}

// Connects to a replica node and links it to every store node but itself,
// so replicas there reach the shards without a detour through this process
// (which would also route the shard's handle through it, and end with it).
caf::expected<connected_node> connect_replica_node(placing& p, const host_port& address,
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
    const std::string from = address.text();
    const std::string to = store_address.text();
    const bool linked_before =
      !p.linked.insert(from < to ? std::make_pair(from, to) : std::make_pair(to, from)).second;
    const auto store_node = p.store_connections.find(to);
    if (linked_before && store_node != p.store_connections.end()) {
      if (auto err = greet_linked_node(p.system, connected->node, store_node->second.node.node(),
                                       p.timeout))
        return err;
      continue;
    }
    if (auto err = link_nodes(p.system, connected->node, store_address, p.timeout))
      return make_troupe_error(troupe_errc::bad_config,
                               "node " + address.text() + " cannot reach the store node "
                                 + store_address.text() + ": " + describe(err));
  }
  return connected;
}

// A replica node this process has greeted: its node actor and its address.
struct reached_node {
  node_actor actor;
  std::string address;
};

// The table's entry for replica node `address`: the store node's there, if
// one is and is no replica node yet, else a new one.
size_t replica_entry(node_table& table, const std::string& address, int64_t clock_offset) {
  for (size_t n = 0; n < table.nodes.size(); ++n)
    if (table.nodes[n].address == address && !table.nodes[n].replica_rank)
      return n;
  table.nodes.push_back(node_entry{address, clock_offset, true, {}, {}});
  return table.nodes.size() - 1;
}

caf::error place_replicas_on_nodes(placing& p, const run_plan& plan,
                                   std::vector<reached_node>& nodes, run_layout& layout) {
  auto& table = layout.nodes;
  std::vector<size_t> by_rank; // each replica node's index in the table
  for (const auto& address : p.config.nodes) {
    auto connected = connect_replica_node(p, address, {});
    if (!connected)
      return connected.error();
    nodes.push_back({connected->node, address.text()});
    table.clock_error_ns = std::max(table.clock_error_ns, connected->clock_error_ns);
    const size_t node = replica_entry(table, address.text(), connected->clock_offset_ns);
    table.nodes[node].replica_rank = by_rank.size();
    by_rank.push_back(node);
  }
  const auto per_node = p.config.replicas_per_node;
  for (size_t i = 0; i < layout.replicas.size(); ++i)
    layout.replicas[i].where =
      site{by_rank[i / per_node],
           "node " + p.config.nodes[i / per_node].text() + " (" + plan.devices[i] + ")"};
  return caf::none;
}

// Spawns a replica on a node through CAF's remote spawn, or here.
replica_spawner make_replica_spawner(const placing& p,
                                     std::shared_ptr<const std::vector<reached_node>> nodes,
                                     std::shared_ptr<const data_source> train) {
  auto& system = p.system;
  return [&system, nodes = std::move(nodes), train, timeout = p.timeout,
          wrap = p.config.wrap_replica_backend](size_t node, const replica_config& cfg,
                                                const std::vector<store_actor>& shards)
           -> caf::expected<replica_actor> {
    if (node == placement::here)
      return spawn_replica(system, cfg, shards, train, wrap);
    const auto& target = nodes->at(node);
    const auto what = "replica " + std::to_string(cfg.index) + " on node " + target.address;
    return spawn_on_node<uint32_t, replica_actor>(system, target.actor, remote_replica_type,
                                                  caf::make_message(cfg, shards), timeout, what,
                                                  ready_atom::value);
  };
}

} // namespace

caf::expected<placement> make_placement(caf::actor_system& system, const run_plan& plan,
                                        std::shared_ptr<const data_source> train,
                                        run_layout& layout) {
  const run_config& c = plan.config;
  placing p{system, c,
            make_handshake(system, c.model, c.data_dir, "coordinator",
                           c.protocol_version != 0 ? c.protocol_version
                                                   : troupe_protocol_version),
            std::chrono::milliseconds(c.step_timeout_ms)};
  p.hello.same_bits_required = plan.traits.reproducible;
  layout = run_layout{};
  layout.shards.resize(c.store_shards);
  layout.replicas.resize(c.replicas);
  placement out;
  if (c.store_nodes.empty())
    place_store_here(out, p, layout);
  else if (auto err = place_store_on_nodes(out, p, layout))
    return err;
  auto nodes = std::make_shared<std::vector<reached_node>>();
  if (c.nodes.empty())
    place_replicas_here(plan, layout);
  else if (auto err = place_replicas_on_nodes(p, plan, *nodes, layout))
    return err;
  out.spawn_replica = make_replica_spawner(p, nodes, std::move(train));
  // A join connects later, when the plan's config no longer lives here.
  out.add_replica_node = [&system, nodes, hello = p.hello, timeout = p.timeout, config = c](
                           const host_port& address,
                           const std::vector<bool>& store_nodes_alive) -> caf::expected<int64_t> {
    placing later{system, config, hello, timeout};
    auto connected = connect_replica_node(later, address, store_nodes_alive);
    if (!connected)
      return connected.error();
    nodes->push_back({connected->node, address.text()});
    return connected->clock_offset_ns;
  };
  return out;
}

} // namespace troupe::detail
