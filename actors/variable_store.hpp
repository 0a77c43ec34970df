// The variable store: owns the flat parameters, the optimizer state and the
// version counter; an update policy decides when gradients become steps.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <caf/expected.hpp>
#include <caf/fwd.hpp>

#include "messages/interfaces.hpp"
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
  // Checkpoints: written to `checkpoint_path` every `checkpoint_every` rounds
  // the policy closes (sync; async has no rounds; 0: never) and when the
  // coordinator asks at an epoch's end (save_atom: marked epoch-complete).
  std::string checkpoint_path;
  uint32_t checkpoint_every = 0;
  std::string model;
  uint64_t config_fingerprint = 0;
};

/// Converts store options to the message a node builds a store from, and back.
store_config to_store_config(const store_options& options);
store_options from_store_config(const store_config& config);

/// Names the actor type nodes register for CAF's remote spawn of a store; its
/// argument is a store_config.
constexpr const char* remote_store_type = "troupe.store";

/// Lets other nodes spawn a variable store here (--store-node).
void add_store_actor_type(caf::actor_system_config& config);

/// Spawns a store; an unknown mode or optimizer is an error (bad_config), not
/// an actor.
caf::expected<store_actor> spawn_variable_store(caf::actor_system& system,
                                                store_options options);

} // namespace troupe
