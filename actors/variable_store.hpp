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
  // A resumed run starts from a checkpoint's optimizer state and round.
  std::vector<float> initial_optimizer_state;
  uint64_t initial_optimizer_steps = 0;
  uint64_t initial_round = 0;
  // Checkpoints: written to `checkpoint_path` every `checkpoint_every` sync
  // rounds (0: only when asked) and whenever asked (save_atom).
  std::string checkpoint_path;
  uint32_t checkpoint_every = 0;
  std::string model;
  uint64_t config_fingerprint = 0;
};

/// Spawns a store; an unknown mode or optimizer is an error, not an actor.
expected<store_actor> spawn_variable_store(caf::actor_system& system,
                                           store_options options);

} // namespace troupe
