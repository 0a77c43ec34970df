// Replaces a file in one step, so that a reader never sees half of it: the
// bytes go to a synced temporary file beside it, which is renamed over it.
#pragma once

#include <cstddef>
#include <string>

#include "common/expected.hpp"

namespace troupe::detail {

/// Writes `content` to `path` atomically: a temporary file in the same
/// directory, synced, renamed over `path`, then the directory synced. On
/// failure no temporary file is left and an older file at `path` is
/// untouched (unless only the directory sync after the rename failed; the
/// error says so). Errors are io_error and name `path`.
status write_file_atomically(const std::string& path, const void* data, size_t size);

/// write_file_atomically of a string's bytes.
inline status write_file_atomically(const std::string& path, const std::string& content) {
  return write_file_atomically(path, content.data(), content.size());
}

} // namespace troupe::detail
