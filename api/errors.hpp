// The public API's errors from the runtime's: a bad option or a failed run.
#pragma once

#include <caf/error.hpp>

#include <troupe/expected.hpp>

namespace troupe {

/// Returns `err` (a refused option or setting) as an invalid_argument error.
model_error invalid_option(const caf::error& err);

/// Returns `err` (a run that stopped) as a run_failed error, or a stopped
/// one when the caller asked for the stop.
model_error run_failure(const caf::error& err);

} // namespace troupe
