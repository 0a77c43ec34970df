// The actor system config of the wire tests' own process: it speaks Troupe's
// messages, to build frames and to talk to a node as a peer would.
#pragma once

#include <caf/actor_system_config.hpp>

namespace troupe::wire_test {

/// A config with Troupe's message types, the middleman, and the heartbeat
/// settings Troupe's processes use (one-sided heartbeats drop a peer).
class peer_config : public caf::actor_system_config {
public:
  peer_config();
};

} // namespace troupe::wire_test
