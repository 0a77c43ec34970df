// The shared state of a system's guarded connections and their watchdog.
#include "actors/cluster/connection_guard.hpp"

namespace troupe::detail {

int64_t guard_clock_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
           std::chrono::steady_clock::now().time_since_epoch())
    .count();
}

connection_guard::connection_guard(guard_settings settings)
  : settings_(settings), watchdog_([this] { watch(); }) {
}

connection_guard::~connection_guard() {
  {
    std::lock_guard<std::mutex> lock{mutex_};
    stopping_ = true;
  }
  wake_.notify_all();
  watchdog_.join();
}

bool connection_guard::reserve(uint64_t bytes) {
  uint64_t current = reserved_.load();
  do {
    if (bytes > settings_.frames.after_handshake - current
        || current > settings_.frames.after_handshake)
      return false;
  } while (!reserved_.compare_exchange_weak(current, current + bytes));
  return true;
}

void connection_guard::release(uint64_t bytes) {
  reserved_.fetch_sub(bytes);
}

bool connection_guard::admit_unverified() {
  size_t current = unverified_.load();
  do {
    if (current >= settings_.max_unverified)
      return false;
  } while (!unverified_.compare_exchange_weak(current, current + 1));
  return true;
}

void connection_guard::unverified_done() {
  unverified_.fetch_sub(1);
}

void connection_guard::add(watched_connection* connection) {
  std::lock_guard<std::mutex> lock{mutex_};
  connections_.insert(connection);
}

void connection_guard::remove(watched_connection* connection) {
  std::lock_guard<std::mutex> lock{mutex_};
  connections_.erase(connection);
}

void connection_guard::watch() {
  std::unique_lock<std::mutex> lock{mutex_};
  while (!stopping_) {
    wake_.wait_for(lock, settings_.watch_interval);
    const int64_t now = guard_clock_ns();
    // A connection unregisters under the same lock before it closes its
    // socket, so each one seen here is still open.
    for (auto* connection : connections_) {
      auto why = connection->stalled(now);
      if (!why.empty())
        connection->refuse(why);
    }
  }
}

} // namespace troupe::detail
