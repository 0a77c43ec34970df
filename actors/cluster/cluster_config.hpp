// The actor system config every Troupe program starts from: all message types,
// the middleman with the same heartbeat settings on every node, and the
// cluster's TLS options.
#pragma once

#include <optional>
#include <string>

#include <caf/actor_system_config.hpp>

namespace troupe {

/// Registers messages and sets cluster-wide middleman defaults:
/// heartbeat every 200 ms, a peer silent for 1 s is dropped (a frozen process
/// or cut link is detected in ~1.1 s), automatic connections off (they would
/// open an unguarded plaintext port on every interface; placement links the
/// nodes that must talk directly), and a work-sharing scheduler whose idle
/// workers poll for 50 us before they sleep ("spinning"), one thread per
/// usable core.
class cluster_config : public caf::actor_system_config {
public:
  cluster_config();

  /// Checks what parse() read and loads the modules it needs; call it after
  /// parse() and before building the actor system.
  caf::error prepare();

  /// Parses the command line and config file, then prepare(). Returns the
  /// exit code when the program should stop here (0 after --help, 2 after
  /// printing what was wrong), nothing when it should go on.
  std::optional<int> parse_and_prepare(int argc, char** argv);

  /// Tells whether the links use mutual TLS (known after prepare()).
  bool tls() const { return tls_enabled_; }

  std::string tls_cert;
  std::string tls_key;
  std::string tls_ca;
  size_t protocol_version;
  bool pin_cores = false;
  std::string gemm_kernel = "auto";

private:
  bool tls_enabled_ = false;
};

} // namespace troupe
