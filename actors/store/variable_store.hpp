// The variable store: owns the flat parameters, the optimizer state and the
// version counter; an update policy decides when gradients become steps.
#pragma once

#include <memory>
#include <vector>

#include <caf/expected.hpp>
#include <caf/fwd.hpp>

#include "messages/interfaces.hpp"

namespace troupe::detail {

/// Names the actor type nodes register for CAF's remote spawn of a store
/// shard; its arguments are the store_config (messages/protocol.hpp) the shard
/// is built from, the run's checkpoint writer (may be invalid) and the
/// coordinator, whose end ends the shard.
constexpr const char* remote_store_type = "troupe.store";

/// Lets other nodes spawn store shards here (--store-nodes).
void add_store_actor_type(caf::actor_system_config& config);

/// The two host buffers that sync shards of one process step their ranges
/// of in turn: each step copies the shard's range from the buffer its
/// replicas just read into the other and steps it there, rather than
/// writing the lines those replicas, on other cores, have just read, which
/// each store would first have to take back from their caches
/// (docs/architecture.md, "Whose buffer").
struct shared_parameter_buffers {
  std::shared_ptr<std::vector<float>> current; // the replicas read this one first
  std::shared_ptr<std::vector<float>> other;
  // The parameters rounded to a 16-bit --wire, every shard's range: the
  // answers of one version, which replicas then read without a copy.
  std::shared_ptr<std::vector<float>> wire;

  /// Both buffers, holding `initial`.
  static shared_parameter_buffers holding(const std::vector<float>& initial);

  explicit operator bool() const { return current != nullptr; }
};

/// Spawns one store shard: on CAF's scheduler threads, or with
/// config.pin_core on a thread of its own pinned to core config.shard. Periodic checkpoint parts go to
/// `writer`, if valid. With `shared` set (sync shards of one process), the
/// shard steps its range of those buffers, which must each hold the whole
/// initial parameters. An unknown mode or optimizer, or a range that does
/// not fit, is an error (bad_config), not an actor.
caf::expected<store_actor> spawn_variable_store(caf::actor_system& system, store_config config,
                                                checkpoint_writer_actor writer = {},
                                                shared_parameter_buffers shared = {});

} // namespace troupe::detail
