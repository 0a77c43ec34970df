// Graceful stops: request_stop, and the signal handlers a fit with
// stop_on_signals sets while it runs.
#include "api/stop.hpp"

#include <atomic>
#include <csignal>
#include <unistd.h>

#include <troupe/fit.hpp>

namespace troupe {

namespace {

// Lock-free, so that a signal handler may touch them.
std::atomic<uint64_t> stop_requests{0};
std::atomic<int> last_stop_signal{0};
std::atomic<int> signals_while_running{0};

extern "C" void troupe_fit_stop_signal(int signal_number) {
  if (signals_while_running.fetch_add(1) > 0)
    _exit(128 + signal_number); // the second one: at once
  last_stop_signal.store(signal_number);
  stop_requests.fetch_add(1);
}

} // namespace

void request_stop() noexcept {
  stop_requests.fetch_add(1);
}

int stop_signal() noexcept {
  return last_stop_signal.load();
}

namespace detail {

uint64_t stop_requests_so_far() {
  return stop_requests.load();
}

signal_stops::signal_stops(bool on) : on_(on) {
  if (!on_)
    return;
  signals_while_running.store(0);
  struct sigaction handler {};
  handler.sa_handler = troupe_fit_stop_signal;
  sigemptyset(&handler.sa_mask);
  handler.sa_flags = SA_RESTART;
  sigaction(SIGINT, &handler, &saved_int_);
  sigaction(SIGTERM, &handler, &saved_term_);
}

signal_stops::~signal_stops() {
  if (!on_)
    return;
  sigaction(SIGINT, &saved_int_, nullptr);
  sigaction(SIGTERM, &saved_term_, nullptr);
}

} // namespace detail

} // namespace troupe
