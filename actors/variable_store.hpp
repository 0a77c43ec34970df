// The variable store: owns the flat parameters, the optimizer state and the
// version counter; an update policy decides when gradients become steps.
#pragma once

#include <caf/expected.hpp>
#include <caf/fwd.hpp>

#include "messages/interfaces.hpp"

namespace troupe {

/// Names the actor type nodes register for CAF's remote spawn of a store; its
/// argument is the store_config (messages/protocol.hpp) the store is built from.
constexpr const char* remote_store_type = "troupe.store";

/// Lets other nodes spawn a variable store here (--store-node).
void add_store_actor_type(caf::actor_system_config& config);

/// Spawns a store; an unknown mode or optimizer is an error (bad_config), not
/// an actor.
caf::expected<store_actor> spawn_variable_store(caf::actor_system& system,
                                                store_config config);

} // namespace troupe
