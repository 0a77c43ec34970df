// Reading a whole data file.
#include "model/data/file_bytes.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace troupe::detail {

expected<std::vector<uint8_t>> read_file_bytes(const std::string& path) {
  std::error_code ec;
  auto status = std::filesystem::status(path, ec);
  if (!std::filesystem::exists(status))
    return fail(errc::io, path + ": no such file");
  if (std::filesystem::is_directory(status))
    return fail(errc::io, path + ": is a directory, not a file");
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return fail(errc::io,
                path + ": cannot be opened (" + std::strerror(errno) + ")");
  std::vector<uint8_t> bytes{std::istreambuf_iterator<char>(in),
                             std::istreambuf_iterator<char>()};
  if (in.bad())
    return fail(errc::io, path + ": read failed");
  return bytes;
}

} // namespace troupe::detail
