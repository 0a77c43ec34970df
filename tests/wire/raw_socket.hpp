// Raw TCP sockets on loopback for the wire tests: a peer that sends exactly
// the bytes a test chooses, reads and discards what comes back, and tells
// when the other end closed.
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

namespace troupe::wire_test {

using std::chrono::milliseconds;

/// One TCP connection, closed on destruction.
class raw_socket {
public:
  raw_socket() = default;
  explicit raw_socket(int fd) : fd_(fd) {}
  ~raw_socket();
  raw_socket(raw_socket&& other) noexcept;
  raw_socket& operator=(raw_socket&& other) noexcept;
  raw_socket(const raw_socket&) = delete;
  raw_socket& operator=(const raw_socket&) = delete;

  /// Connects to 127.0.0.1:`port` (connected() tells whether it worked).
  static raw_socket connect_to(uint16_t port);

  bool connected() const { return fd_ >= 0; }

  /// Hands the socket over: the caller closes it.
  int release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }

  /// Sends all of `data` within `timeout`, reading and discarding what the
  /// peer sends meanwhile (so neither side blocks the other); false if the
  /// peer closed first or the time ran out.
  bool send_all(const std::vector<char>& data, milliseconds timeout);

  /// Reads what comes within `timeout`, returning early once `want` bytes
  /// arrived or the peer closed.
  std::vector<char> read_some(size_t want, milliseconds timeout);

  /// Reads and discards until the peer closes (true) or `timeout` passes.
  bool closed_by_peer(milliseconds timeout);

  /// Closes the connection now.
  void close();

private:
  // Reads what is there without waiting; false once the peer closed.
  bool drain(std::vector<char>* keep, size_t want);

  int fd_ = -1;
};

/// A socket listening on 127.0.0.1 at a port of the system's choosing.
class raw_listener {
public:
  raw_listener();
  ~raw_listener();
  raw_listener(const raw_listener&) = delete;
  raw_listener& operator=(const raw_listener&) = delete;

  uint16_t port() const { return port_; }
  int fd() const { return fd_; }

  /// Accepts one connection within `timeout` (not connected() if none came).
  raw_socket accept(milliseconds timeout);

private:
  int fd_ = -1;
  uint16_t port_ = 0;
};

} // namespace troupe::wire_test
