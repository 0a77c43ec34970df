// Files for the export tests: a temporary directory removed at the end, and
// whole-file reads and writes of bytes.
#pragma once

#include <fstream>
#include <iterator>
#include <string>

#include "../../temp_dir.hpp"

namespace troupe {

using testing::temp_dir;

/// Returns a file's bytes (empty if it cannot be read).
inline std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

/// Replaces a file's content with `bytes`.
inline void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

} // namespace troupe
