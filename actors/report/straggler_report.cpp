// Building and rendering the straggler report.
#include "actors/report/straggler_report.hpp"

#include <algorithm>

#include <fmt/core.h>

namespace troupe::detail {

straggler_report make_straggler_report(const fit_summary& summary) {
  straggler_report report;
  for (size_t i = 0; i < summary.replica_totals.size(); ++i) {
    const auto& total = summary.replica_totals[i];
    replica_pace pace;
    pace.replica = static_cast<uint32_t>(i);
    pace.compute_ms_per_sample =
      total.samples > 0 ? 1e3 * total.compute_seconds / double(total.samples) : 0;
    const double busy = total.compute_seconds + total.wait_seconds;
    pace.wait_fraction = busy > 0 ? total.wait_seconds / busy : 0;
    pace.rounds_waited_on = i < summary.waited_on.size() ? summary.waited_on[i] : 0;
    pace.lost = std::find(summary.lost_replicas.begin(), summary.lost_replicas.end(), i)
                != summary.lost_replicas.end();
    report.replicas.push_back(pace);
  }
  // A replica that died computed less than the run: its pace says nothing.
  std::vector<double> paces;
  std::vector<uint32_t> lasted;
  for (const auto& pace : report.replicas)
    if (!pace.lost) {
      paces.push_back(pace.compute_ms_per_sample);
      lasted.push_back(pace.replica);
    }
  if (paces.empty())
    return report;
  const auto slowest = std::max_element(paces.begin(), paces.end());
  report.slowest = lasted[static_cast<size_t>(slowest - paces.begin())];
  std::vector<double> sorted = paces;
  std::sort(sorted.begin(), sorted.end());
  const size_t n = sorted.size();
  const double median = n % 2 == 1 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
  report.slowest_to_median = median > 0 ? *slowest / median : 1;
  if (report.slowest_to_median > 1.5)
    report.straggler = report.slowest;
  return report;
}

std::vector<std::string> straggler_lines(const straggler_report& report) {
  std::vector<std::string> lines;
  size_t lasted = 0;
  for (const auto& pace : report.replicas) {
    lines.push_back(fmt::format("replica {}: compute {:.3f} ms/sample, waited {:.0f}%, "
                                "{} {} waited on it{}",
                                pace.replica, pace.compute_ms_per_sample,
                                100 * pace.wait_fraction, pace.rounds_waited_on,
                                pace.rounds_waited_on == 1 ? "round" : "rounds",
                                pace.lost ? " (lost during the run)" : ""));
    lasted += pace.lost ? 0 : 1;
  }
  if (lasted < 2) // nobody to compare it with
    return lines;
  lines.push_back(fmt::format("slowest: replica {} ({:.2f}x the median compute per sample)",
                              report.slowest, report.slowest_to_median));
  if (report.straggler)
    lines.push_back(fmt::format("straggler: replica {} is {:.1f}x slower than the median",
                                *report.straggler, report.slowest_to_median));
  return lines;
}

} // namespace troupe::detail
