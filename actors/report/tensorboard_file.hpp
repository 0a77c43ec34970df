// The --tensorboard event file: TensorBoard's Event records in TFRecord
// framing, a file_version record first, then one record of scalars per write.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <caf/error.hpp>
#include <caf/expected.hpp>

namespace troupe::detail {

/// Writes one run's scalars as a TensorBoard event file, each record flushed
/// as it is written.
class tensorboard_file {
public:
  /// Creates `dir` if needed and starts the new file
  /// `dir`/events.out.tfevents.<unix seconds>.<hostname> with its
  /// file_version record at `wall_time` (seconds since the Unix epoch), or,
  /// when a file of that name exists, the name with the next free ".N"; a
  /// directory that cannot be made or a file that cannot be created is a
  /// bad_config error naming it.
  static caf::expected<tensorboard_file> open(const std::string& dir, double wall_time);

  /// Opens as above at the system clock's time.
  static caf::expected<tensorboard_file> open(const std::string& dir);

  /// Writes one event of `step` at `wall_time` holding every (tag, value)
  /// as a scalar, and flushes it. A tag that is not UTF-8 is a bad_data error
  /// and writes nothing; a failed write is a bad_config error naming the
  /// file, and every later write returns it too.
  caf::error write_scalars(int64_t step, double wall_time,
                           const std::vector<std::pair<std::string, float>>& values);

  /// Names the file written.
  const std::string& path() const {
    return path_;
  }

private:
  tensorboard_file(std::FILE* file, std::string path);
  caf::error write_record(const std::string& data);

  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file_;
  std::string path_;
  caf::error failed_; // the first failed write; the file ends in a torn record
};

} // namespace troupe::detail
