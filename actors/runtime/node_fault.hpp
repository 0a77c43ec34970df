// A node's death on purpose (troupe-node --fault=kill@R or stop@R): its
// process sends itself SIGKILL or SIGSTOP as the first of its replicas is
// about to push store round R, or the first of its store shards is about to
// take a push of round R, so a failure lands in an exact round, to try the
// elastic promise against a schedule of failures.
#pragma once

#include <cstdint>
#include <string>

#include <caf/expected.hpp>

namespace troupe::detail {

/// Makes the process signal itself once, before a push of round `round`.
struct node_fault {
  int signal = 0; // 0: no fault
  uint64_t round = 0;
};

/// Parses "kill@R" or "stop@R" (R a store round); empty is no fault.
caf::expected<node_fault> parse_node_fault(const std::string& text);

/// Plans `fault` for every replica and store shard spawned in this process
/// from now on (a node's --fault).
void plan_node_fault(node_fault fault);

/// Returns the fault plan_node_fault planned (signal 0: none).
node_fault planned_node_fault();

/// Sends this process `signal` unless a fault fired in it already: one
/// fault per process, however many of its replicas reach the round (a
/// stopped node that is continued goes on).
void fire_node_fault(int signal);

} // namespace troupe::detail
