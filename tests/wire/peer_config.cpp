// The wire tests' actor-system config.
#include "tests/wire/peer_config.hpp"

#include <chrono>

#include <caf/io/middleman.hpp>

#include "messages/register.hpp"

namespace troupe::wire_test {

peer_config::peer_config() {
  register_messages(*this);
  load<caf::io::middleman>();
  set("middleman.heartbeat-interval", caf::timespan{std::chrono::milliseconds{200}});
  set("middleman.connection-timeout", caf::timespan{std::chrono::milliseconds{1000}});
}

} // namespace troupe::wire_test
