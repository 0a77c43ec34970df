// The straggler report at the end of a run: per replica its compute time per
// sample, the share of its time it waited, and how many rounds waited on it;
// which one was slowest, and whether it is a straggler.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "messages/protocol.hpp"

namespace troupe::detail {

/// Sums one replica's run for the report.
struct replica_pace {
  uint32_t replica = 0;
  double compute_ms_per_sample = 0;
  double wait_fraction = 0;      // of its compute + wait time
  uint64_t rounds_waited_on = 0; // rounds that closed on its push (sync)
  bool lost = false;             // it died during the run: not compared with the others
};

/// Holds the report: every replica's pace, and among those that lasted the
/// run the slowest and the straggler.
struct straggler_report {
  std::vector<replica_pace> replicas;
  uint32_t slowest = 0;
  double slowest_to_median = 1; // the slowest's compute per sample over the median's
  std::optional<uint32_t> straggler; // the slowest, when more than 1.5x the median
};

/// Builds the report from a finished fit's per-replica totals.
straggler_report make_straggler_report(const fit_summary& summary);

/// Renders the report as lines for a person: one per replica, then the
/// slowest, and a line naming the straggler when there is one.
std::vector<std::string> straggler_lines(const straggler_report& report);

} // namespace troupe::detail
