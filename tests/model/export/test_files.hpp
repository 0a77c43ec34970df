// Files for the export tests: a temporary directory removed at the end, and
// whole-file reads and writes of bytes.
#pragma once

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>

namespace troupe {

/// Creates a fresh directory under the system temp dir; removes it when done.
struct temp_dir {
  std::filesystem::path path;

  temp_dir() {
    static std::atomic<int> counter{0};
    const auto stamp = std::chrono::steady_clock::now().time_since_epoch().count();
    const auto salt = std::random_device{}();
    path = std::filesystem::temp_directory_path()
           / ("troupe_export_test_" + std::to_string(stamp) + "_" + std::to_string(salt) + "_"
              + std::to_string(counter++));
    std::filesystem::create_directories(path);
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
  ~temp_dir() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }

  /// Returns the path of `name` inside the directory.
  std::string file(const std::string& name) const { return (path / name).string(); }
};

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
