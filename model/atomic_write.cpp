// Temporary file, fsync, rename, directory fsync: the write checkpoint.cpp
// does, for the exported model files.
#include "model/atomic_write.hpp"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <random>
#include <system_error>

#include <fcntl.h>
#include <unistd.h>

namespace troupe::detail {

namespace {

std::string errno_text(int err) {
  return std::error_code(err, std::generic_category()).message();
}

bool write_all(int fd, const char* data, size_t size) {
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::write(fd, data + done, size - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      if (n == 0)
        errno = EIO;
      return false;
    }
    done += static_cast<size_t>(n);
  }
  return true;
}

// Unique among threads and processes writing beside the same path.
std::string temp_name(const std::string& path) {
  static std::atomic<uint64_t> counter{0};
  static const auto salt = std::random_device{}();
  const auto stamp = std::chrono::steady_clock::now().time_since_epoch().count();
  return path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(salt) + "."
         + std::to_string(stamp) + "." + std::to_string(counter++);
}

// Without syncing the directory the rename itself may not survive a crash.
status sync_directory_of(const std::string& path) {
  auto dir = std::filesystem::path(path).parent_path();
  if (dir.empty())
    dir = ".";
  const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  // EINVAL: this file system cannot sync a directory; nothing more to do there.
  if (dir_fd < 0 || (::fsync(dir_fd) != 0 && errno != EINVAL)) {
    const int err = errno;
    if (dir_fd >= 0)
      ::close(dir_fd);
    return fail(errc::io, path + ": written, but syncing directory " + dir.string()
                                        + " failed, so it may not survive a crash: "
                                        + errno_text(err));
  }
  ::close(dir_fd);
  return {};
}

} // namespace

status write_file_atomically(const std::string& path, const void* data, size_t size) {
  const std::string temp = temp_name(path);
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0)
    return fail(errc::io,
                path + ": cannot create temporary file " + temp + ": " + errno_text(errno));
  // Reads errno first, before close or unlink can change it.
  auto give_up = [&](const std::string& what, bool still_open) -> error {
    const int err = errno;
    if (still_open)
      ::close(fd);
    ::unlink(temp.c_str());
    return fail(errc::io, path + ": " + what + ": " + errno_text(err));
  };
  if (!write_all(fd, static_cast<const char*>(data), size))
    return give_up("cannot write " + temp, true);
  if (::fsync(fd) != 0)
    return give_up("cannot sync " + temp, true);
  if (::close(fd) != 0)
    return give_up("cannot close " + temp, false);
  if (::rename(temp.c_str(), path.c_str()) != 0)
    return give_up("cannot rename " + temp + " over it", false);
  return sync_directory_of(path);
}

} // namespace troupe::detail
