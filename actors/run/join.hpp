// Nodes that join a running fit (--accept-joins): the door a node knocks at,
// the connection the coordinator then makes to it, and the replicas it
// moves there.
#pragma once

#include <cstdint>
#include <string>

#include <caf/actor_system.hpp>
#include <caf/expected.hpp>
#include <caf/result.hpp>

#include "actors/run/epoch_phases.hpp"
#include "messages/interfaces.hpp"

namespace troupe::detail {

/// Connects to the node that listens on `host`:`port` as to any node of the
/// run (handshake, links to the store nodes), then moves replicas onto it
/// from the places hosting the most, until it hosts its share (at most
/// --max-replicas-per-node). Answers what it hosts, or why it cannot join.
caf::result<std::string> accept_join(coordinator_pointer self, const std::string& host,
                                     uint16_t port);

/// Spawns the door that passes joins to `coordinator` and publishes it on
/// `config.accept_joins` (over TLS with the run's certificates, else behind
/// the frame guard); an address that cannot be listened on is an error.
caf::expected<join_door_actor> open_join_door(caf::actor_system& system,
                                              const coordinator_actor& coordinator,
                                              const run_config& config);

/// Stops listening for joins and stops the door.
void close_join_door(caf::actor_system& system, const join_door_actor& door,
                     const run_config& config);

} // namespace troupe::detail
