// TLS between Troupe processes: the three PEM files of a process's identity,
// their validation before CAF's openssl module sees them (it aborts the
// process on bad files and runs anonymous TLS on none), and the config.
#pragma once

#include <string>

#include <caf/error.hpp>

namespace caf {
class actor_system_config;
} // namespace caf

namespace troupe::detail {

/// Names the PEM files of one process's TLS identity (docs/tls.md).
struct tls_files {
  std::string certificate; // --tls-cert: this process's X.509 certificate
  std::string key;         // --tls-key: its unencrypted private key
  std::string ca;          // --tls-ca: the cluster CA certificate(s)

  /// Returns true when any of the three is set: the caller wants TLS, and
  /// check_tls_files must pass before anything is published or connected.
  bool enabled() const;
};

/// Reads the files named by CAF's own options openssl.certificate,
/// openssl.key and openssl.cafile (after cfg.parse), for programs that take
/// those as well as --tls-*.
tls_files tls_files_from(const caf::actor_system_config& cfg);

/// Checks that all three files are set (or none: no error, TLS off), are
/// readable, hold a PEM certificate, an unencrypted PEM key that belongs to
/// it and PEM CA certificates, and that the certificate verifies against the
/// CA for both server and client use and is valid now. Returns a
/// troupe_errc::bad_config error naming the file and the problem.
caf::error check_tls_files(const tls_files& files);

/// Puts the files into cfg's openssl.certificate, openssl.key and
/// openssl.cafile (and empties openssl.capath and openssl.passphrase), so
/// that a caf::openssl::manager loaded into cfg requires and verifies
/// certificates on both sides. Call it after check_tls_files passed and
/// before building the actor system.
void apply_tls(caf::actor_system_config& cfg, const tls_files& files);

/// Returns true for an address that only this host can reach: 127.0.0.0/8,
/// ::1 (also bracketed or IPv4-mapped) and "localhost". An empty address
/// (bind to every interface) is not loopback.
bool is_loopback(const std::string& address);

} // namespace troupe::detail
