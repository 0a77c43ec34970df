// The node program: hosts replicas and store shards for remote coordinators,
// job after job, until SIGINT or SIGTERM. A program of its own is a main
// that calls node_main (examples/node.cpp).
#pragma once

namespace troupe {

/// Runs a node with the command line `argv` (--port, --bind, --model,
/// --max-frame-size, --slow-replica, TLS, ...; --help lists them) and
/// returns its exit code: 0 once stopped by a signal or after --help, 1 when
/// it cannot listen, 2 for a bad option.
int node_main(int argc, char** argv);

} // namespace troupe
