// A fresh directory under the system's temp dir for a test's files, removed
// with everything in it when the test ends, even when the test took the
// owner's rights from it.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <random>
#include <string>
#include <system_error>
#include <vector>

namespace troupe::testing {

/// Owns a new directory named `prefix` plus a stamp no other test shares.
struct temp_dir {
  std::filesystem::path path;

  explicit temp_dir(const std::string& prefix = "troupe_test") {
    static std::atomic<int> counter{0};
    const auto stamp = std::chrono::steady_clock::now().time_since_epoch().count();
    path = std::filesystem::temp_directory_path()
           / (prefix + "_" + std::to_string(stamp) + "_" + std::to_string(std::random_device{}())
              + "_" + std::to_string(counter++));
    std::filesystem::create_directories(path);
  }
  ~temp_dir() {
    namespace fs = std::filesystem;
    std::error_code ignored;
    fs::permissions(path, fs::perms::owner_all, fs::perm_options::add, ignored);
    fs::remove_all(path, ignored);
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;

  /// Returns the path of `name` inside the directory.
  std::string file(const std::string& name) const { return (path / name).string(); }

  /// Returns the names of the directory's entries, sorted.
  std::vector<std::string> names() const {
    std::vector<std::string> result;
    for (const auto& entry : std::filesystem::directory_iterator(path))
      result.push_back(entry.path().filename().string());
    std::sort(result.begin(), result.end());
    return result;
  }
};

} // namespace troupe::testing
