// What the guarded connections of one actor system share: their bounds, the
// payload bytes announced and not yet received, the count of connections
// whose peer has not completed a handshake, and a watchdog thread that closes
// connections that stall.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "actors/cluster/basp_header_check.hpp"

namespace troupe::detail {

/// One connection the watchdog looks at (implemented on the I/O side).
class watched_connection {
public:
  virtual ~watched_connection() = default;
  /// Returns why the connection has stalled at `now_ns` (steady clock), or "".
  virtual std::string stalled(int64_t now_ns) const = 0;
  /// Logs `why` once and closes the connection; callable from any thread.
  virtual void refuse(const std::string& why) = 0;
};

/// The bounds of a process's guarded connections.
struct guard_settings {
  frame_bounds frames;
  /// How long a peer may take to finish a header it started, or to complete
  /// its handshake once connected.
  std::chrono::milliseconds stall_bound{3000};
  /// Connections accepted whose peer has not completed a handshake.
  size_t max_unverified = 32;
  /// How often the watchdog looks.
  std::chrono::milliseconds watch_interval{100};
};

/// Returns the steady clock in nanoseconds (the watchdog's and the
/// connections' common time).
int64_t guard_clock_ns();

/// Shared by a system's guarded connections; its destructor stops the watchdog.
class connection_guard {
public:
  explicit connection_guard(guard_settings settings);
  ~connection_guard();
  connection_guard(const connection_guard&) = delete;
  connection_guard& operator=(const connection_guard&) = delete;

  const guard_settings& settings() const { return settings_; }

  /// Reserves `bytes` of the announced-payload budget (frames.after_handshake
  /// for all connections together); false if they do not fit now.
  bool reserve(uint64_t bytes);
  /// Returns bytes reserve() gave.
  void release(uint64_t bytes);

  /// Counts one more accepted connection without a handshake; false (and
  /// nothing counted) when max_unverified are open already.
  bool admit_unverified();
  /// Uncounts one: its handshake completed, or it closed before.
  void unverified_done();
  size_t unverified() const { return unverified_.load(); }

  /// Puts a connection under the watchdog until remove().
  void add(watched_connection* connection);
  void remove(watched_connection* connection);

private:
  void watch();

  const guard_settings settings_;
  std::atomic<uint64_t> reserved_{0};
  std::atomic<size_t> unverified_{0};
  std::mutex mutex_;
  std::condition_variable wake_;
  std::set<watched_connection*> connections_;
  bool stopping_ = false;
  std::thread watchdog_;
};

} // namespace troupe::detail
