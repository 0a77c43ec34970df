// Reads a CSV file of samples: a header row naming the columns, one column of
// integer class labels (optional for features alone), every other column a
// numeric feature.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/expected.hpp"

namespace troupe::detail {

/// Holds the rows of a CSV file split into features and labels.
struct csv_table {
  int count = 0;
  int features = 0;
  std::vector<float> values;   // (count, features), columns in file order less the label
  std::vector<int32_t> labels; // (count)
  std::vector<float> targets;  // (count): read_csv_targets only
};

/// Reads `path`: its first row names the columns; `label_column` holds integer
/// labels in [0, INT32_MAX), every other column finite numbers. Takes CRLF or
/// LF line ends, a trailing newline, a UTF-8 byte order mark and spaces around
/// fields; quoting is not supported. Every problem is an error naming the file
/// and, for a row, its line (1 is the header) and column.
expected<csv_table> read_csv(const std::string& path, const std::string& label_column = "label");

/// Reads `path` as read_csv does, but for features alone: every column is a
/// feature except one named `label_column`, which is skipped when present
/// (its fields are not parsed). The table's labels stay empty.
expected<csv_table> read_csv_features(const std::string& path,
                                      const std::string& label_column = "label");

/// Reads `path` as read_csv does, but `target_column` holds a finite float
/// target per row (regression) instead of a label.
expected<csv_table> read_csv_targets(const std::string& path, const std::string& target_column);

} // namespace troupe::detail
