// The public API's errors from the runtime's: a bad option or a failed run.
#pragma once

#include <caf/error.hpp>

#include <troupe/expected.hpp>

namespace troupe::detail {

/// Returns `err` (a refused option or setting) as an invalid_argument error.
error invalid_option(const caf::error& err);

/// Returns `err` (a run that ended early) as the public error of its kind:
/// bad_data, device, node_lost (a replica, shard, node or link lost),
/// timeout, stopped (as the caller asked) or run_failed (a node's refusal
/// included).
error run_failure(const caf::error& err);

} // namespace troupe::detail
