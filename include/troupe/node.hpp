// A node program: hosts replicas and store shards for remote coordinators.
#pragma once

#include <troupe/export.hpp>

namespace troupe {

/// Runs a node until SIGINT or SIGTERM, serving one job after another, with
/// the options of `troupe-node --help` (port, bind address, TLS, ...).
/// Register a program's own models (register_model) before calling it.
/// Returns the process's exit code.
TROUPE_API int node_main(int argc, char** argv);

} // namespace troupe
