// The node program: hosts replicas and store shards for remote coordinators,
// job after job, until SIGINT or SIGTERM. The public troupe::node_main
// (<troupe/node.hpp>) runs it.
#pragma once

namespace troupe::detail {

/// Runs a node with the command line `argv` (--port, --bind, --model,
/// --max-frame-size, --slow-replica, TLS, ...; --help lists them) and
/// returns its exit code: 0 once stopped by a signal or after --help, 1 when
/// it cannot listen, 2 for a bad option.
int run_node_program(int argc, char** argv);

} // namespace troupe::detail
