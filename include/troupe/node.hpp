// A node program: hosts replicas and store shards for remote coordinators.
#pragma once

namespace troupe {

/// Runs a node until SIGINT or SIGTERM, serving one job after another, with
/// the options of `troupe-node --help` (port, bind address, TLS, ...).
/// Register a program's own models (register_model) before calling it.
/// Returns the process's exit code.
int node_main(int argc, char** argv);

} // namespace troupe
