// Setting TCP_USER_TIMEOUT on this process's TCP sockets.
#include "actors/cluster/send_bound.hpp"

#include <dirent.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstdlib>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/defaults.hpp>

namespace troupe::detail {

namespace {

// A TCP socket over IPv4 or IPv6: what TCP_USER_TIMEOUT applies to.
bool is_tcp_socket(int fd) {
  int value = 0;
  socklen_t size = sizeof(value);
  if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &value, &size) != 0
      || (value != AF_INET && value != AF_INET6))
    return false;
  size = sizeof(value);
  return getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &value, &size) == 0 && value == IPPROTO_TCP;
}

} // namespace

std::chrono::milliseconds unacknowledged_send_bound(const caf::actor_system& system) {
  const auto timeout = caf::get_or(system.config(), "middleman.connection-timeout",
                                   caf::defaults::middleman::connection_timeout);
  return std::max<std::chrono::milliseconds>(
    std::chrono::seconds(2), std::chrono::duration_cast<std::chrono::milliseconds>(2 * timeout));
}

void bound_unacknowledged_sends(std::chrono::milliseconds bound) {
  // The middleman makes its sockets itself, so they are found among the
  // process's open files. One opened meanwhile is found by the next call.
  DIR* fds = opendir("/proc/self/fd");
  if (fds == nullptr)
    return;
  const unsigned int milliseconds = static_cast<unsigned int>(bound.count());
  const int own = dirfd(fds);
  while (const dirent* entry = readdir(fds)) {
    char* end = nullptr;
    const long fd = std::strtol(entry->d_name, &end, 10);
    if (end == entry->d_name || *end != '\0' || fd == own || !is_tcp_socket(static_cast<int>(fd)))
      continue;
    setsockopt(static_cast<int>(fd), IPPROTO_TCP, TCP_USER_TIMEOUT, &milliseconds,
               sizeof(milliseconds));
  }
  closedir(fds);
}

void bound_unacknowledged_sends(const caf::actor_system& system) {
  bound_unacknowledged_sends(unacknowledged_send_bound(system));
}

} // namespace troupe::detail
