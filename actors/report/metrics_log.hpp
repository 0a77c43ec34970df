// Progress lines for people and JSON-lines metrics for programs.
#pragma once

#include <cstdio>
#include <memory>
#include <string>

#include <caf/expected.hpp>

#include "actors/config/run_config.hpp"
#include "actors/report/fit_observer.hpp"
#include "messages/protocol.hpp"

namespace troupe::detail {

/// Says what a run scores: a classifier's loss and accuracy, or a
/// regression's loss alone.
enum class reported_metrics { loss_and_accuracy, loss };

/// Formats one epoch as a Keras-like progress line; staleness appears when the
/// run's update policy reports it (record.staleness_reported).
std::string progress_line(const epoch_record& record, uint32_t epochs,
                          reported_metrics metrics = reported_metrics::loss_and_accuracy);

/// Writes one JSON object per line: a record per epoch, then a final record.
class metrics_log {
public:
  /// Opens (truncates) `path`; an unwritable path is an error.
  static caf::expected<metrics_log> open(const std::string& path);

  void write_epoch(const epoch_record& record, const run_config& options);
  void write_summary(const fit_summary& summary, const run_config& options);
  /// Writes a "step" record: the run's optimizer steps, samples and wall
  /// time so far, and the epoch's mean training loss so far (--log-every).
  void write_step(const epoch_progress& progress);
  /// Writes a "respawn", "move" or "store_heal" record: which replica (or
  /// shard), in which epoch and round (a heal's: the snapshot's), from where
  /// to where, and how long the replacement took.
  void write_replacement(const replacement_record& replacement);
  /// Writes a "recovery" record: what recovered, the round it restarted
  /// from, and when that round closed (from the news of the loss, and as a
  /// wall-clock time).
  void write_recovery(const recovery_record& recovery);

private:
  explicit metrics_log(std::FILE* file) : file_(file, &std::fclose) {}
  void write_line(const std::string& line);

  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file_;
};

/// Formats a 64-bit checksum as 16 hex digits.
std::string hex64(uint64_t value);

} // namespace troupe::detail
