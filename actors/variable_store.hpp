// The variable store: owns the flat parameters, the optimizer state and the
// version counter; an update policy decides when gradients become steps.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <caf/fwd.hpp>

#include "messages/interfaces.hpp"
#include "model/expected.hpp"
#include "model/optim/optimizer.hpp"

namespace troupe {

/// Describes a store: its policy, its optimizer and where training starts.
struct store_options {
  std::string mode = "sync"; // the update policy: sync or async
  optimizer_config optimizer;
  std::vector<float> initial_parameters;
  uint64_t initial_version = 0;
};

/// Spawns a store; an unknown mode or optimizer is an error, not an actor.
expected<store_actor> spawn_variable_store(caf::actor_system& system,
                                           store_options options);

} // namespace troupe
