// The checkpoint writer: assembles one file of the whole flat buffer from the
// store shards' parts of one round, so a run saved with S shards resumes with
// any other number.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <caf/expected.hpp>
#include <caf/fwd.hpp>

#include "messages/interfaces.hpp"
#include "model/checkpoint.hpp"

namespace troupe::detail {

/// Says where a run's checkpoints go and what run they belong to.
struct checkpoint_target {
  std::string path;
  std::string model;
  std::vector<setting_text> settings; // those a resume must match (resume_settings)
  std::string optimizer;
  size_t parameter_count = 0;
  uint32_t shards = 1;
};

/// Builds one checkpoint from every shard's part of the same round, in any
/// order, with the replicas' residuals when every part carries them. Fails when a part is missing or doubled, belongs to another round
/// or shard count, or does not fit its shard's range.
caf::expected<checkpoint> assemble_checkpoint(const checkpoint_target& target,
                                         const std::vector<checkpoint_part>& parts);

/// Gives each of `parts` its slices of `residuals` (--wire=int8: every
/// replica's residual, replica after replica, each `parameter_count` long);
/// leaves them without when there are none.
void attach_residuals(std::vector<checkpoint_part>& parts, const std::vector<float>& residuals,
                      size_t parameter_count);

/// Spawns the writer of a run's checkpoints (in this process: the file lands
/// on the coordinator's disk wherever the shards run). It also keeps the
/// newest complete snapshot in memory, for a store that heals; with an empty
/// path it only keeps snapshots.
checkpoint_writer_actor spawn_checkpoint_writer(caf::actor_system& system,
                                                checkpoint_target target);

} // namespace troupe::detail
