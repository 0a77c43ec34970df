// The learning rate a run reports, and a callback's change of it between
// epochs, which every store shard takes before the next epoch starts.
#pragma once

#include <cstdint>
#include <functional>

#include "actors/run/epoch_phases.hpp"

namespace troupe::detail {

/// Returns the rate of the step that brought the store to `version` (its
/// last one): the schedule's rate at step version - 1 times the run's
/// learning-rate factor.
double last_step_learning_rate(const coordinator_state& st, uint64_t version);

/// Multiplies the run's learning-rate factor by `factor`, has every store
/// shard take the new one, then calls `then`; an error fails the run. Called
/// between epochs, when no shard steps.
void scale_learning_rate(coordinator_pointer self, float factor, std::function<void()> then);

} // namespace troupe::detail
