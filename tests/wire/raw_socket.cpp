// Raw loopback sockets for the wire tests.
#include "tests/wire/raw_socket.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <stdexcept>

namespace troupe::wire_test {

namespace {

using clock_type = std::chrono::steady_clock;

int milliseconds_left(clock_type::time_point deadline) {
  const auto left =
    std::chrono::duration_cast<milliseconds>(deadline - clock_type::now()).count();
  return left > 0 ? static_cast<int>(left) : 0;
}

sockaddr_in loopback(uint16_t port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return addr;
}

} // namespace

raw_socket::~raw_socket() {
  close();
}

raw_socket::raw_socket(raw_socket&& other) noexcept : fd_(other.fd_) {
  other.fd_ = -1;
}

raw_socket& raw_socket::operator=(raw_socket&& other) noexcept {
  if (this != &other) {
    close();
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

raw_socket raw_socket::connect_to(uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return raw_socket{};
  auto addr = loopback(port);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return raw_socket{};
  }
  return raw_socket{fd};
}

void raw_socket::close() {
  if (fd_ >= 0)
    ::close(fd_);
  fd_ = -1;
}

bool raw_socket::drain(std::vector<char>* keep, size_t want) {
  char buffer[65536];
  for (;;) {
    const auto got = ::recv(fd_, buffer, sizeof(buffer), MSG_DONTWAIT);
    if (got == 0)
      return false;
    if (got < 0)
      return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
    if (keep != nullptr && keep->size() < want)
      keep->insert(keep->end(), buffer, buffer + got);
  }
}

bool raw_socket::send_all(const std::vector<char>& data, milliseconds timeout) {
  if (fd_ < 0)
    return false;
  const auto deadline = clock_type::now() + timeout;
  size_t sent = 0;
  while (sent < data.size()) {
    pollfd p{fd_, POLLIN | POLLOUT, 0};
    if (::poll(&p, 1, milliseconds_left(deadline)) <= 0)
      return false;
    if ((p.revents & POLLIN) != 0 && !drain(nullptr, 0))
      return false;
    if ((p.revents & (POLLERR | POLLHUP)) != 0)
      return false;
    if ((p.revents & POLLOUT) != 0) {
      const auto n = ::send(fd_, data.data() + sent, data.size() - sent,
                            MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
        return false;
      if (n > 0)
        sent += static_cast<size_t>(n);
    }
  }
  return true;
}

std::vector<char> raw_socket::read_some(size_t want, milliseconds timeout) {
  std::vector<char> got;
  const auto deadline = clock_type::now() + timeout;
  while (fd_ >= 0 && got.size() < want) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, milliseconds_left(deadline)) <= 0)
      break;
    if (!drain(&got, want))
      break;
  }
  return got;
}

bool raw_socket::closed_by_peer(milliseconds timeout) {
  const auto deadline = clock_type::now() + timeout;
  while (fd_ >= 0) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, milliseconds_left(deadline)) <= 0)
      return false;
    if (!drain(nullptr, 0))
      return true;
  }
  return false;
}

raw_listener::raw_listener() {
  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  auto addr = loopback(0);
  socklen_t size = sizeof(addr);
  if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0
      || ::listen(fd_, 16) != 0
      || ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &size) != 0)
    throw std::runtime_error("cannot listen on 127.0.0.1");
  port_ = ntohs(addr.sin_port);
}

raw_listener::~raw_listener() {
  if (fd_ >= 0)
    ::close(fd_);
}

raw_socket raw_listener::accept(milliseconds timeout) {
  pollfd p{fd_, POLLIN, 0};
  if (::poll(&p, 1, static_cast<int>(timeout.count())) <= 0)
    return raw_socket{};
  return raw_socket{::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC)};
}

} // namespace troupe::wire_test
