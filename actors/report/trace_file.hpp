// The --trace file: a Chrome trace-event JSON (opens in Perfetto and
// chrome://tracing) with one track per replica (each round, its compute and
// its wait for the answers) and per store shard (each round's step), and
// instant events for epoch ends, checkpoints and lost replicas, all on the
// coordinator's clock.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "messages/protocol.hpp"

namespace troupe::detail {

/// Writes one run's trace as it goes (the events of each epoch at its end).
class trace_file {
public:
  /// Opens `path` for a run of `replicas` replicas and `shards` store shards
  /// that started at `run_start_ns` (steady clock); a file that cannot be
  /// written is a bad_config error naming it.
  static caf::expected<std::unique_ptr<trace_file>> open(const std::string& path,
                                                         uint32_t replicas, uint32_t shards,
                                                         int64_t run_start_ns);

  ~trace_file();
  trace_file(const trace_file&) = delete;
  trace_file& operator=(const trace_file&) = delete;

  /// Adds a replica's spans (its process's clock + offset_ns = ours): a
  /// "round r" span around each round's compute and wait.
  void add_replica_spans(uint32_t replica, const std::vector<trace_span>& spans,
                         int64_t offset_ns);

  /// Adds a store shard's spans ("step r": reduction, optimizer step, answers).
  void add_shard_spans(uint32_t shard, const std::vector<trace_span>& spans, int64_t offset_ns);

  /// Adds an instant event on the coordinator's track at `at_ns` (our clock).
  void add_instant(const std::string& name, int64_t at_ns);

  /// Ends the file, with the clock offsets' error bound in its metadata.
  void close(int64_t clock_error_ns);

private:
  explicit trace_file(std::FILE* file, int64_t run_start_ns);
  void write_event(const std::string& json);
  double micros(int64_t ns) const;

  std::FILE* file_;
  int64_t run_start_ns_;
  bool first_ = true;
};

} // namespace troupe::detail
