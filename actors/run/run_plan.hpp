// What fit() works out from a checked run before it spawns anything, and
// the one place where the run becomes what each store shard, replica and
// the checkpoint writer are given.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "actors/config/run_config.hpp"
#include "actors/policy/policy_registry.hpp"
#include "actors/store/checkpoint_writer.hpp"
#include "messages/protocol.hpp"
#include "model/shard_layout.hpp"

namespace troupe::detail {

/// Holds where a run's store starts: the seeded initial parameters, or a
/// checkpoint's state.
struct store_start {
  shared_floats parameters;      // the whole flat buffer
  shared_floats optimizer_state; // every plane of it; empty: a fresh optimizer
  uint64_t version = 0;
  uint64_t optimizer_steps = 0;
  uint64_t round = 0;
  float learning_rate_factor = 1.0f; // what the schedule's rate is times
};

/// Holds a planned run.
struct run_plan {
  run_config config; // checked
  policy_traits traits;
  std::vector<std::string> devices; // per replica
  size_t parameter_count = 0;
  std::vector<parameter_span> state_spans; // the model's (model::state_spans)
  size_t train_rows = 0; // the samples the replicas train on
  std::vector<shard_range> ranges; // of the store's shards
  store_start start;
  uint32_t first_epoch = 0;  // a resumed run's may be > 0
  uint64_t resume_round = 0; // rounds of that first epoch a resumed run skips
  // --wire=int8 resumed from an epoch's end: each replica's residual,
  // replica after replica, for the first epoch's orders; empty otherwise.
  std::vector<float> resume_residuals;
};

/// Says whether every replica's --wire=int8 residual can be had at any
/// store round: int8 under a policy whose replicas wait for every round
/// (sync without backups), so checkpoint cuts, a graceful stop and a lost
/// replica's roll back keep them.
inline bool keeps_residuals_by_round(const run_plan& plan) {
  return plan.config.wire == float_codec::int8 && plan.traits.replicas_wait_for_rounds;
}

/// Plans a checked run over `train_count` training samples: the device of
/// each replica (--devices=auto opens the GPUs to see which exist; a store
/// device in this process must open), the store's ranges and where it
/// starts (--resume: the checkpoint, which must fit the run and leave an
/// epoch to train).
caf::expected<run_plan> plan_run(const run_config& checked, size_t train_count);

/// Returns what store shard `shard` of the plan is built from, spawned in
/// membership epoch `membership`.
store_config store_config_for(const run_plan& plan, uint32_t shard, uint64_t membership);

/// Returns the job description of replica `index`, spawned in membership
/// epoch `membership`.
replica_config replica_config_for(const run_plan& plan, uint32_t index, uint64_t membership);

/// Returns where the run's checkpoints go, and what run they are of.
checkpoint_target checkpoint_target_for(const run_plan& plan);

} // namespace troupe::detail
