// A node's front door: the handshake a coordinator must pass before it spawns
// replicas on the node, and the coordinator's side of connecting to one.
#pragma once

#include <chrono>
#include <string>

#include <caf/expected.hpp>
#include <caf/fwd.hpp>

#include "actors/config/host_port.hpp"
#include "messages/interfaces.hpp"

namespace troupe::detail {

/// Describes the node a service fronts.
struct node_options {
  std::string model;      // serve only this model; empty: any
  uint32_t protocol_version = 0;
  bool tls = false;       // links to other nodes use mutual TLS
  uint64_t max_frame_size = 0; // the longest frame it reads (plaintext); 0: no bound
};

/// Spawns the node service that answers coordinators' handshakes.
node_actor spawn_node_service(caf::actor_system& system, node_options options);

/// Describes a node after a passed handshake: its front door, and how its
/// steady clock relates to ours (estimated as NTP does from the quickest of
/// the handshake's and a few clock readings' round trips): add
/// clock_offset_ns to its times to get ours, give or take clock_error_ns
/// (half that round trip, less the node's own time).
struct connected_node {
  node_actor node;
  int64_t clock_offset_ns = 0;
  int64_t clock_error_ns = 0;
  uint64_t max_frame_size = 0; // its bound on this process's frames (0: none)
};

/// Connects to the node at `address` and runs the handshake; a node that is
/// unreachable, silent or incompatible is an error naming it.
caf::expected<connected_node> connect_to_node(caf::actor_system& system,
                                              const host_port& address, bool tls,
                                              const handshake& hello,
                                              std::chrono::milliseconds timeout);

/// Asks `node` to take the node `linked` as greeted: `linked` opened the
/// connection between the two, which serves both directions (a second one
/// would be redundant, and closing one under TLS drops others).
caf::error greet_linked_node(caf::actor_system& system, const node_actor& node,
                             const caf::node_id& linked, std::chrono::milliseconds timeout);

/// Asks `node` to connect directly to the node at `address`.
caf::error link_nodes(caf::actor_system& system, const node_actor& node,
                      const host_port& address, std::chrono::milliseconds timeout);

} // namespace troupe::detail
