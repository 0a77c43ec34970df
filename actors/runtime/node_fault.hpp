// A node's failure on purpose (troupe-node --fault=kill@R, stop@R, refuse@R
// or refuse-store@R): as the first of its replicas is about to push store
// round R, or the first of its store shards is about to take a push of round
// R, its process sends itself SIGKILL or SIGSTOP, or goes on but refuses to
// start any replica (refuse) or store shard (refuse-store) from then on. A
// failure then lands in an exact round, to try the elastic promise against
// a schedule of failures.
#pragma once

#include <cstdint>
#include <string>

#include <caf/expected.hpp>

namespace troupe::detail {

/// The `signal` of a node_fault that refuses replicas instead of signalling.
constexpr int refuse_replicas_fault = -1;
/// The `signal` of a node_fault that refuses store shards instead.
constexpr int refuse_store_fault = -2;

/// Makes the process signal itself once, before a push of round `round`.
struct node_fault {
  int signal = 0; // 0: no fault; refuse_*_fault: no signal, refuse
  uint64_t round = 0;
};

/// Parses "kill@R", "stop@R", "refuse@R" or "refuse-store@R" (R a store
/// round); empty is no fault.
caf::expected<node_fault> parse_node_fault(const std::string& text);

/// Plans `fault` for every replica and store shard spawned in this process
/// from now on (a node's --fault).
void plan_node_fault(node_fault fault);

/// Returns the fault plan_node_fault planned (signal 0: none).
node_fault planned_node_fault();

/// Sends this process `signal` (or, for a refuse_*_fault, makes it refuse
/// replicas or store shards) unless a fault fired in it already: one fault per
/// process, however many of its replicas reach the round (a stopped node
/// that is continued goes on).
void fire_node_fault(int signal);

/// Says whether a refuse@R fault fired in this process.
bool node_refuses_replicas();

/// Says whether a refuse-store@R fault fired in this process.
bool node_refuses_store();

} // namespace troupe::detail
