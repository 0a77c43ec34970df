// The records a run makes of itself, from the coordinator's state: an
// epoch's record from the replicas' reports and the store's stats, its test
// (validation) scores, and the summary the caller gets at the end.
#pragma once

#include <cstdint>

#include <caf/error.hpp>

#include "actors/run/epoch_phases.hpp"

namespace troupe::detail {

/// Returns how many replicas are alive.
uint32_t live_count(const coordinator_state& st);

/// Writes the test set's loss, accuracy and --extra-metrics under `params`
/// into `record`: the one evaluation, after each epoch and for a resumed
/// run with none left. A test set that cannot be read is bad_data.
caf::error evaluate_test_set(coordinator_state& st, const params_msg& params,
                             epoch_record& record);

/// Sums the replicas' reports and the store's work since the last epoch,
/// which took `seconds`.
epoch_record sum_epoch(const coordinator_state& st, const store_stats& stats, double seconds);

/// Builds the caller's summary from the final parameters.
fit_summary summarize(const coordinator_state& st, const params_msg& params);

} // namespace troupe::detail
