// What a store shard sends the run's checkpoint writer, and what the
// writer reports back: the shard's part of a checkpoint, the writer's stats.
#pragma once

#include <cstdint>
#include <string>

#include <caf/meta/type_name.hpp>

#include "messages/shared_floats.hpp"

namespace troupe::detail {

/// Carries one shard's part of a checkpoint: its slices of the parameters and
/// of the optimizer state, and where the run stands. A writer assembles one
/// file from every shard's part of the same round.
struct checkpoint_part {
  uint32_t shard = 0;
  uint32_t shards = 1;
  uint64_t version = 0;
  uint64_t round = 0;       // the store's next round
  uint64_t epoch = 0;       // the epoch in progress, 0-based
  uint64_t epoch_round = 0; // rounds of that epoch already done
  bool epoch_complete = false;
  uint64_t optimizer_steps = 0;
  shared_floats params;          // the shard's slice
  shared_floats optimizer_state; // the shard's slice of every plane
  uint64_t membership = 0;       // the membership epoch of the shard that sent it
  float learning_rate_factor = 1.0f; // what the schedule's rate is times
  // --wire=int8: every replica's error-feedback residual at `round`, this
  // shard's slice of each, replica after replica; empty: none kept.
  shared_floats residuals;
};

/// Sums what a checkpoint writer did: how many periodic checkpoints it could
/// not write, and why the last one failed.
struct checkpoint_stats {
  uint64_t written = 0;
  uint64_t failed = 0;
  std::string last_error;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, checkpoint_part& x) {
  return f(caf::meta::type_name("checkpoint_part"), x.shard, x.shards, x.version, x.round,
           x.epoch, x.epoch_round, x.epoch_complete, x.optimizer_steps, x.params,
           x.optimizer_state, x.membership, x.learning_rate_factor, x.residuals);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, checkpoint_stats& x) {
  return f(caf::meta::type_name("checkpoint_stats"), x.written, x.failed, x.last_error);
}

} // namespace troupe::detail
