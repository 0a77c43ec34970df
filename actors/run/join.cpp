// Nodes that join a running fit.
#include "actors/run/join.hpp"

#include <algorithm>
#include <optional>
#include <vector>

#include <caf/all.hpp>
#include <caf/io/all.hpp>
#include <caf/openssl/publish.hpp>

#include "actors/cluster/frame_guard.hpp"
#include "actors/cluster/send_bound.hpp"
#include "actors/run/respawn.hpp"
#include "actors/run/store_heal.hpp"
#include "messages/errors.hpp"

namespace troupe::detail {

namespace {

join_door_actor::behavior_type join_door(join_door_actor::pointer self,
                                         coordinator_actor coordinator) {
  return {
    [self, coordinator](join_atom, const std::string& host, uint16_t port) {
      return self->delegate(coordinator, join_atom::value, host, port);
    },
  };
}

// The replicas to move onto `node`, which just joined: one at a time from
// the place hosting the most (this process first among equals), until the
// node hosts its share of the live places (at least one, at most
// --max-replicas-per-node).
std::vector<size_t> plan_moves(const coordinator_state& st, size_t node) {
  auto hosted = replicas_per_node(st);
  size_t here = 0;
  for (const auto& replica : st.replicas)
    here += replica.alive && replica.where.node == placement::here;
  const size_t places = st.nodes.live_replica_nodes() + (here > 0 ? 1 : 0);
  size_t share = std::max<size_t>(1, st.replicas.size() / std::max<size_t>(places, 1));
  if (const auto bound = st.setup.plan.config.max_replicas_per_node; bound > 0)
    share = std::min<size_t>(share, bound);
  std::vector<size_t> moves;
  std::vector<bool> taken(st.replicas.size(), false);
  while (hosted[node] < share) {
    // The busiest place other than the new node: here, or a live node.
    size_t from = placement::here;
    size_t most = here;
    for (size_t k : st.nodes.replica_nodes())
      if (k != node && st.nodes.alive(k) && hosted[k] > most) {
        from = k;
        most = hosted[k];
      }
    if (most <= hosted[node] + 1)
      break; // already even
    std::optional<size_t> pick;
    for (size_t i = 0; i < st.replicas.size() && !pick; ++i) {
      const auto& replica = st.replicas[i];
      if (replica.alive && !replica.respawning && !taken[i] && replica.where.node == from)
        pick = i;
    }
    if (!pick)
      break;
    taken[*pick] = true;
    moves.push_back(*pick);
    ++hosted[node];
    if (from == placement::here)
      --here;
    else
      --hosted[from];
  }
  return moves;
}

// A node joined while the store heals: a heal waiting for a place goes on
// there. Answers what the node hosts.
std::string joined_during_heal(coordinator_pointer self, size_t node, const std::string& why) {
  auto& st = self->state;
  resume_parked_heal(self, node);
  std::string hosted;
  for (size_t i = 0; i < st.replicas.size(); ++i)
    if (st.replicas[i].where.node == node)
      hosted += (hosted.empty() ? "" : ", ") + std::to_string(i);
  const std::string which = hosted.empty()                             ? "no replica yet"
                            : hosted.find(',') == std::string::npos ? "replica " + hosted
                                                                    : "replicas " + hosted;
  if (st.setup.observer.on_warning)
    st.setup.observer.on_warning(why + " while the store heals; it hosts " + which);
  return "hosting " + which;
}

} // namespace

caf::result<std::string> accept_join(coordinator_pointer self, const std::string& host,
                                     uint16_t port) {
  auto& st = self->state;
  const host_port address{host, port};
  if (st.done)
    return make_troupe_error(troupe_errc::bad_config, "the run is ending");
  // A live store node may join as a replica node too: it keeps its entry.
  const auto known = st.nodes.find_live(address.text());
  if (known && st.nodes.nodes[*known].replica_rank)
    return make_troupe_error(troupe_errc::bad_config,
                             "node " + address.text() + " is already in this run");
  auto added = st.setup.where.add_replica_node(address, st.nodes.store_nodes_alive());
  if (!added)
    return make_troupe_error(troupe_errc::bad_config, "node " + address.text()
                                                        + " cannot join: "
                                                        + describe(added.error()));
  size_t node = known ? *known : st.nodes.nodes.size();
  if (!known)
    st.nodes.nodes.push_back(node_entry{address.text(), *added, true, {}, {}});
  st.nodes.add_replica_role(node);
  st.members.next_epoch();
  place_parked(self, node); // respawns waiting for a place come first
  const std::string why = "node " + address.text() + " joined";
  if (st.healing) // a heal places every replica itself: no moves meanwhile
    return joined_during_heal(self, node, why);
  const auto moves = plan_moves(st, node);
  trace_instant(st, why);
  std::string moved;
  for (size_t i : moves) {
    moved += (moved.empty() ? "" : ", ") + std::to_string(i);
    move_replica(self, i, node, why);
  }
  const std::string which = (moves.size() == 1 ? "replica " : "replicas ") + moved;
  if (st.setup.observer.on_warning)
    st.setup.observer.on_warning(why + " in epoch " + std::to_string(st.epoch + 1) + "; "
                                 + (moves.empty() ? "no replica moves there"
                                                  : which + (moves.size() == 1 ? " moves there"
                                                                               : " move there")));
  return "hosting " + (moves.empty() ? std::string("no replica yet") : which);
}

caf::expected<join_door_actor> open_join_door(caf::actor_system& system,
                                              const coordinator_actor& coordinator,
                                              const run_config& config) {
  const auto& at = *config.accept_joins;
  auto door = system.spawn(join_door, coordinator);
  auto port = config.tls
                ? caf::openssl::publish(door, at.port, at.host.c_str(), true)
                : publish_guarded(system, caf::actor_cast<caf::strong_actor_ptr>(door),
                                  system.message_types(door), at.port, at.host, true,
                                  default_max_frame_size);
  if (!port) {
    caf::anon_send_exit(door, caf::exit_reason::user_shutdown);
    return make_troupe_error(troupe_errc::bad_config, "--accept-joins: cannot listen on "
                                                        + at.text() + ": "
                                                        + describe(port.error()));
  }
  bound_unacknowledged_sends(system); // the listening socket passes it on
  return door;
}

void close_join_door(caf::actor_system& system, const join_door_actor& door,
                     const run_config& config) {
  system.middleman().unpublish(door, config.accept_joins->port);
  caf::anon_send_exit(door, caf::exit_reason::user_shutdown);
}

} // namespace troupe::detail
