// Reads IDX files (the MNIST / Fashion-MNIST format), gzip-compressed or not.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/expected.hpp"

namespace troupe::detail {

/// Holds the images of one IDX image file (magic 2051), row-major bytes.
struct idx_images {
  int count = 0;
  int rows = 0;
  int cols = 0;
  std::vector<uint8_t> pixels; // count * rows * cols
};

/// Reads an IDX image file (.gz is detected by its content, not its name).
/// Every problem is an error naming the file: missing, wrong magic, wrong
/// dimensions, truncated, trailing bytes, gzip corruption.
expected<idx_images> read_idx_images(const std::string& path);

/// Reads an IDX label file (magic 2049).
expected<std::vector<uint8_t>> read_idx_labels(const std::string& path);

} // namespace troupe::detail
