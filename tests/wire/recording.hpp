// Recording a real job's byte streams: a TCP proxy on loopback between a
// coordinator and a node keeps every byte of each connection, both ways.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace troupe::cluster_test {
class temp_dir;
}

namespace troupe::wire_test {

class raw_listener;

using bytes = std::vector<char>;

/// The bytes of one connection: what the connecting side sent, and what the
/// accepting side sent back.
struct recorded_connection {
  bytes to_server;
  bytes to_client;
};

/// Accepts connections on a port of its own and forwards each to
/// 127.0.0.1:`target_port`, recording its bytes, until stop().
class recording_proxy {
public:
  explicit recording_proxy(uint16_t target_port);
  ~recording_proxy();
  recording_proxy(const recording_proxy&) = delete;
  recording_proxy& operator=(const recording_proxy&) = delete;

  uint16_t port() const;

  /// Stops forwarding and returns every connection's bytes, in accept order.
  std::vector<recorded_connection> stop();

private:
  struct link;
  void run();

  uint16_t target_port_;
  std::unique_ptr<raw_listener> listener_;
  std::atomic<bool> stopping_{false};
  std::mutex mutex_;
  std::vector<recorded_connection> done_;
  std::thread thread_;
};

/// A real job recorded, and what it cost the processes.
struct recorded_job {
  recorded_connection coordinator_to_node; // the connection with the most bytes
  uint64_t node_job_kib = 0;        // the node's peak memory over its start
  uint64_t coordinator_peak_kib = 0; // the coordinator's peak memory
};

/// Runs a one-epoch job of a coordinator on one node through a
/// recording_proxy and returns its main connection; throws if the job fails.
recorded_job record_job(const cluster_test::temp_dir& dir);

} // namespace troupe::wire_test
