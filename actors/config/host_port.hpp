// A node's address as the options name it, "HOST:PORT" ("[::1]:4000" for an
// IPv6 host), parsed once where the options are read.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <caf/expected.hpp>

namespace troupe::detail {

/// Names a process a coordinator connects to.
struct host_port {
  std::string host;
  uint16_t port = 0;

  /// Writes it back as "HOST:PORT".
  std::string text() const;
};

inline bool operator==(const host_port& a, const host_port& b) {
  return a.host == b.host && a.port == b.port;
}

/// Parses "HOST:PORT"; a malformed address is a bad_config error.
caf::expected<host_port> parse_host_port(const std::string& text);

/// Parses a comma-separated list of "HOST:PORT" (empty: none); the error
/// names `option` and the bad entry.
caf::expected<std::vector<host_port>> parse_host_port_list(const std::string& option,
                                                           const std::string& text);

} // namespace troupe::detail
