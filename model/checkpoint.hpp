// The checkpoint file of a training run: what it holds, an atomic writer, a
// validating reader, and the check that a checkpoint fits the run resuming it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/expected.hpp"
#include "common/settings_fields.hpp"

namespace troupe::detail {

/// Holds everything a run needs to resume where it stopped.
struct checkpoint {
  std::string model;           // the model spec text, e.g. "784-128relu-10"
  // The run settings a resume must match (option name, value), and their
  // hash; a format-1 or 2 file has the hash only.
  std::vector<setting_text> settings;
  uint64_t config_fingerprint = 0;
  uint64_t version = 0;        // optimizer steps applied to params
  uint64_t round = 0;          // the store's next round
  uint64_t epoch = 0;          // the epoch in progress, 0-based
  uint64_t epoch_round = 0;    // rounds of that epoch already done: the data position
  // Written once `epoch` was complete (the coordinator's end-of-epoch save):
  // a resume starts the next epoch. False in a periodic, mid-epoch checkpoint
  // and in a format-1 file, which has no flag.
  bool epoch_complete = false;
  std::string optimizer;       // optimizer name, e.g. "adam"
  uint64_t optimizer_steps = 0;
  std::vector<float> params;          // the flat parameter buffer
  std::vector<float> optimizer_state; // optimizer::state()
  // What the schedule's learning rate is times (a callback's reductions);
  // 1 in a file of format 3 or older.
  float learning_rate_factor = 1.0f;
  // --wire=int8, saved at an epoch's end: each replica's error-feedback
  // residual, replica after replica (replicas x parameters); empty otherwise
  // and in a file of format 4 or older.
  std::vector<float> residuals;
};

/// Writes `c` to `path` atomically: a temporary file in the same directory,
/// synced, then renamed over `path` and the directory synced. Returns the
/// bytes written. On failure no temporary file is left and an older file at
/// `path` is untouched (unless only the final directory sync failed, after
/// the rename; the error says so).
expected<size_t> write_checkpoint(const std::string& path, const checkpoint& c);

/// Reads and validates the checkpoint at `path`: magic, format version,
/// byte-order and float format, sizes against the file size, checksums.
/// A missing or unreadable file is io_error; any damage is bad_format.
expected<checkpoint> read_checkpoint(const std::string& path);

/// Hashes run settings as a checkpoint's config_fingerprint does.
uint64_t settings_fingerprint(const std::vector<setting_text>& settings);

/// Checks that `c`, read from `path`, can resume a run training `model` with
/// `settings` and `parameter_count` parameters. Succeeds, or fails with an
/// invalid_argument error naming each setting that differs (a file that
/// records only the hash: that they differ). Model texts are compared in
/// canonical form ("784-128relu-10").
status check_compatible(const checkpoint& c, const std::string& model,
                        const std::vector<setting_text>& settings, size_t parameter_count,
                        const std::string& path);

} // namespace troupe::detail
