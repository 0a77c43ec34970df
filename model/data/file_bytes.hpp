// Reading a whole data file, with the errors every reader gives alike.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/expected.hpp"

namespace troupe::detail {

/// Returns the bytes of the file at `path`; a missing file, a directory or
/// an unreadable file is an io_error naming the path.
expected<std::vector<uint8_t>> read_file_bytes(const std::string& path);

} // namespace troupe::detail
