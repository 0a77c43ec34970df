// Cluster-wide config defaults and their checks.
#include "actors/cluster_config.hpp"

#include <chrono>

#include <caf/io/middleman.hpp>

#include "actors/handshake.hpp"
#include "messages/register.hpp"

namespace troupe {

cluster_config::cluster_config() : protocol_version(troupe_protocol_version) {
  register_messages(*this);
  load<caf::io::middleman>();
  using std::chrono::milliseconds;
  set("middleman.heartbeat-interval", caf::timespan{milliseconds{200}});
  set("middleman.connection-timeout", caf::timespan{milliseconds{1000}});
  set("middleman.enable-automatic-connections", true);
  opt_group{custom_options_, "global"}
    .add(tls_cert, "tls-cert", "PEM certificate of this process (mutual TLS)")
    .add(tls_key, "tls-key", "PEM private key of --tls-cert")
    .add(tls_ca, "tls-ca", "PEM certificate of the cluster CA that signs every peer");
  opt_group{custom_options_, "troupe"}
    .add(protocol_version, "protocol-version",
         "wire protocol version to announce (for compatibility tests)");
}

bool cluster_config::tls() const {
  return !tls_cert.empty() || !tls_key.empty() || !tls_ca.empty();
}

caf::error cluster_config::prepare() {
  return caf::none;
}

} // namespace troupe
