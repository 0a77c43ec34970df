// Parsing node addresses.
#include "actors/config/host_port.hpp"

#include <sstream>

#include "messages/errors.hpp"

namespace troupe::detail {

std::string host_port::text() const {
  const bool ipv6 = host.find(':') != std::string::npos;
  return (ipv6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

caf::expected<host_port> parse_host_port(const std::string& text) {
  const auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size())
    return make_troupe_error(troupe_errc::bad_config, "'" + text + "' is not HOST:PORT");
  const auto port_text = text.substr(colon + 1);
  if (port_text.size() > 5 || port_text.find_first_not_of("0123456789") != std::string::npos
      || std::stoul(port_text) == 0 || std::stoul(port_text) > 65535)
    return make_troupe_error(troupe_errc::bad_config, "'" + text + "': port must be 1..65535");
  auto host = text.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2); // [::1]:4000
  return host_port{host, static_cast<uint16_t>(std::stoul(port_text))};
}

caf::expected<std::vector<host_port>> parse_host_port_list(const std::string& option,
                                                           const std::string& text) {
  std::vector<host_port> list;
  std::stringstream entries(text);
  for (std::string entry; std::getline(entries, entry, ',');) {
    if (entry.empty())
      continue;
    auto parsed = parse_host_port(entry);
    if (!parsed)
      return make_troupe_error(troupe_errc::bad_config, "--" + option + ": " + describe(parsed.error()));
    list.push_back(*parsed);
  }
  return list;
}

} // namespace troupe::detail
