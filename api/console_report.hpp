// What a fit prints and records as it runs: the banner, a line per epoch (and
// a live bar on a terminal), the metrics file's records and the summary.
#pragma once

#include <functional>
#include <string>

#include <troupe/fit.hpp>

#include "actors/config/run_config.hpp"
#include "actors/report/fit_observer.hpp"
#include "actors/report/metrics_log.hpp"
#include "api/program_config.hpp"
#include "api/tensorboard_log.hpp"
#include "messages/protocol.hpp"

namespace troupe::detail {

/// Prints what the run will do: mode, replicas, store, model, data, numerics.
void print_banner(const std::string& program, const run_config& c, const source_pair& data);

/// Shows each epoch as a line (and a live bar on a terminal) and writes the
/// metrics' epoch and step records and the TensorBoard scalars; the lines
/// show `scores`. `quiet`: no
/// line and no warning is printed.
fit_observer make_console_observer(const program_config& cfg, const run_config& c,
                                   reported_metrics scores, metrics_log* metrics,
                                   tensorboard_log* tensorboard, bool quiet);

/// Prints the final line (with `scores`) and, unless progress is off, the
/// straggler report.
void print_summary(const program_config& cfg, const run_config& c, reported_metrics scores,
                   const fit_summary& result);

} // namespace troupe::detail
