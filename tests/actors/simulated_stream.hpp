// Test-only: the queue of a simulated device's ops. An op runs only when
// something needs what it wrote: the host waits (copy_to_host, finish,
// has_non_finite, an event's wait_host), another queue reaches a wait for an
// event behind it, or memory is freed (cudaFree waits for the device too).
// Code that reads device memory without waiting for the ops that write it,
// or reuses a page-locked buffer while a copy from it is still queued, then
// sees stale values, as it may on a GPU, and the bitwise tests fail.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "model/backend/backend.hpp"

namespace troupe::testing {

class simulated_stream {
public:
  /// One lock for every stream: a queue's wait runs another queue's ops.
  static std::recursive_mutex& lock() {
    static std::recursive_mutex mutex;
    return mutex;
  }

  static std::shared_ptr<simulated_stream> make() {
    auto stream = std::make_shared<simulated_stream>();
    std::lock_guard<std::recursive_mutex> guard(lock());
    auto& all = streams();
    all.erase(std::remove_if(all.begin(), all.end(), [](const auto& s) { return s.expired(); }),
              all.end());
    all.push_back(stream);
    return stream;
  }

  /// Runs what every stream has queued: a free of device or page-locked memory.
  static void run_every_stream() {
    std::lock_guard<std::recursive_mutex> guard(lock());
    for (const auto& weak : streams())
      if (auto stream = weak.lock())
        stream->run_all();
  }

  void enqueue(std::function<void()> op) {
    std::lock_guard<std::recursive_mutex> guard(lock());
    pending_.push_back(std::move(op));
    ++queued_;
  }

  /// The number of ops queued so far: an event's place in this queue.
  uint64_t position() const {
    std::lock_guard<std::recursive_mutex> guard(lock());
    return queued_;
  }

  /// Runs the ops queued before `position` that have not run yet.
  void run_until(uint64_t position) {
    std::lock_guard<std::recursive_mutex> guard(lock());
    while (queued_ - pending_.size() < position && !pending_.empty()) {
      auto op = std::move(pending_.front());
      pending_.pop_front(); // before it runs: a wait inside it may come back here
      op();
    }
  }

  void run_all() { run_until(position()); }

  /// The number of ops that have run (or are running).
  uint64_t started() const {
    std::lock_guard<std::recursive_mutex> guard(lock());
    return queued_ - pending_.size();
  }

private:
  static std::vector<std::weak_ptr<simulated_stream>>& streams() {
    static std::vector<std::weak_ptr<simulated_stream>> all;
    return all;
  }

  std::deque<std::function<void()>> pending_;
  uint64_t queued_ = 0;
};

/// A place in a simulated stream: it fires once the ops before it ran.
class simulated_event final : public device_event {
public:
  simulated_event(std::shared_ptr<simulated_stream> stream, uint64_t position)
    : stream_(std::move(stream)), position_(position) {}
  void wait_host() const override { stream_->run_until(position_); }
  const std::shared_ptr<simulated_stream>& stream() const { return stream_; }
  uint64_t position() const { return position_; }
  bool fired() const { return stream_->started() >= position_; }

private:
  std::shared_ptr<simulated_stream> stream_;
  uint64_t position_;
};

} // namespace troupe::testing
