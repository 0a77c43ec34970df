// What fit needs of graceful stops: the count of requests so far, and the
// SIGINT and SIGTERM handlers of a fit with stop_on_signals.
#pragma once

#include <csignal>
#include <cstdint>

namespace troupe::detail {

/// Returns how many stops were asked for so far in this process: a fit
/// stops once the count moves past what it was at its start.
uint64_t stop_requests_so_far();

/// Routes SIGINT and SIGTERM to request_stop while it lives (when `on`),
/// and puts the process's own handlers back after.
class signal_stops {
public:
  explicit signal_stops(bool on);
  ~signal_stops();
  signal_stops(const signal_stops&) = delete;
  signal_stops& operator=(const signal_stops&) = delete;

private:
  bool on_;
  struct sigaction saved_int_ {};
  struct sigaction saved_term_ {};
};

} // namespace troupe::detail
