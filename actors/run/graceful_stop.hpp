// A graceful stop of a run, at the caller's request (a signal to the
// program, or request_stop): the open round closes on every shard, the
// checkpoint is written when the run has one, and the run ends as stopped.
#pragma once

#include "actors/run/epoch_phases.hpp"

namespace troupe::detail {

/// Stops the run gracefully. Mid-epoch under a policy with rounds (sync,
/// delayed), every shard halts, then closes its rounds up to the latest one
/// any shard has begun and gives its part of a checkpoint, which the writer
/// writes with --checkpoint; between epochs the run ends before the next
/// one (after the epoch's own checkpoint); otherwise it ends at once. The
/// run's error is `stopped` and says where and what was written.
void stop_gracefully(coordinator_pointer self);

/// Ends the run as stopped after epoch `st.epoch`: what start_epoch does
/// once a stop was asked for between epochs.
void end_stopped_between_epochs(coordinator_pointer self);

} // namespace troupe::detail
