// The nodes this process has greeted: itself, each coordinator whose
// handshake it accepted, and each node it linked to. A node spawns actors
// for a remote peer only if every handle they are given lives on one of
// these: an actor on a node it never met would wait on a route that CAF 0.17
// never closes (a proxy learned through a hop that is gone lives forever).
#pragma once

#include <caf/fwd.hpp>

namespace troupe::detail {

/// Remembers `node` as greeted (for the rest of the process).
void greet_node(const caf::node_id& node);

/// Tells whether `node` was greeted.
bool greeted_node(const caf::node_id& node);

} // namespace troupe::detail
