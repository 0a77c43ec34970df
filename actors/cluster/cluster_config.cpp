// Cluster-wide config defaults and their checks.
#include "actors/cluster/cluster_config.hpp"

#include <chrono>
#include <cstdio>

#include <caf/io/middleman.hpp>
#include <caf/openssl/manager.hpp>

#include "actors/core_pinning.hpp"
#include "actors/cluster/handshake.hpp"
#include "actors/cluster/spinning_scheduler.hpp"
#include "actors/cluster/tls.hpp"
#include "messages/errors.hpp"
#include "messages/register.hpp"
#include "model/backend/cpu/gemm/gemm.hpp"

namespace troupe {

cluster_config::cluster_config() : protocol_version(troupe_protocol_version) {
  register_messages(*this);
  load<caf::io::middleman>();
  using std::chrono::milliseconds;
  set("middleman.heartbeat-interval", caf::timespan{milliseconds{200}});
  set("middleman.connection-timeout", caf::timespan{milliseconds{1000}});
  // Off: with it on, CAF 0.17's BASP broker listens on one more port, on
  // every interface and always in plaintext, whatever --bind and TLS say,
  // and that port has no frame-size guard (actors/cluster/frame_guard.hpp). Troupe
  // links the nodes it needs linked itself (placement: link_nodes).
  set("middleman.enable-automatic-connections", false);
  // Troupe's messages are few and large, and replicas wait while the store
  // works: one central queue whose idle workers poll it for 50 us before they
  // sleep (actors/cluster/spinning_scheduler.hpp) beats work stealing's
  // polling (1 replica: 58k -> 99k samples/s with CAF's plain "sharing"; see
  // docs/benchmarks.md). scheduler.policy=sharing or =stealing picks CAF's own.
  set("scheduler.policy", caf::atom(spinning_scheduler_policy));
  // CPU replicas compute on the scheduler's threads (replica_needs_own_thread):
  // one per core, where CAF's default of at least 4 would have threads of
  // replicas and shards take turns on a 2-core machine (45k against 95k).
  set("scheduler.max-threads", static_cast<size_t>(usable_cores()));
  opt_group{custom_options_, "global"}
    .add(tls_cert, "tls-cert", "PEM certificate of this process (mutual TLS)")
    .add(tls_key, "tls-key", "PEM private key of --tls-cert")
    .add(tls_ca, "tls-ca", "PEM certificate of the cluster CA that signs every peer")
    .add(pin_cores, "pin-cores",
         "pin replica i and store shard i to core i % cores (the rest of CAF to core 0); "
         "each hand-over then wakes a thread: on 2 cores ~0.8x the default's speed")
    .add(gemm_kernel, "gemm-kernel",
         "CPU GEMM kernel: auto (the CPU's fastest), avx512, avx2, fma128 or portable");
  opt_group{custom_options_, "troupe"}
    .add(protocol_version, "protocol-version",
         "wire protocol version to announce (for compatibility tests)");
}

std::optional<int> cluster_config::parse_and_prepare(int argc, char** argv) {
  if (auto err = parse(argc, argv)) {
    std::fprintf(stderr, "error: bad option or value (see --help): %s\n",
                 render(err).c_str());
    return 2;
  }
  if (cli_helptext_printed)
    return 0;
  if (auto err = prepare()) {
    std::fprintf(stderr, "error: %s\n", describe(err).c_str());
    return 2;
  }
  return std::nullopt;
}

caf::error cluster_config::prepare() {
  // CAF 0.17 keeps unknown keys of a config file without a word; a misspelled
  // option must not silently fall back to its default.
  // Keys of the [global] section sit at the top level of `content`; the
  // other sections (middleman, scheduler, ...) are dictionaries there.
  for (const auto& entry : content)
    if (caf::get_if<caf::settings>(&entry.second) == nullptr
        && custom_options_.qualified_name_lookup("global", entry.first) == nullptr)
      return make_troupe_error(troupe_errc::bad_config,
                               "unknown option '" + entry.first
                                 + "' in the config file (see --help)");
  if (auto kernel = select_gemm_kernel(gemm_kernel); !kernel)
    return make_troupe_error(troupe_errc::bad_config, "--gemm-kernel: " + kernel.error().message);
  if (caf::get_or(content, "middleman.enable-automatic-connections", false))
    return make_troupe_error(troupe_errc::bad_config,
                             "middleman.enable-automatic-connections makes CAF listen on "
                             "every interface, in plaintext and without a frame-size "
                             "guard: Troupe keeps it off");
  if (pin_cores)
    pin_actor_system_threads(*this);
  if (caf::get_or(content, "scheduler.policy", caf::atom("stealing"))
      == caf::atom(spinning_scheduler_policy))
    use_spinning_scheduler(*this);
  tls_files files{tls_cert, tls_key, tls_ca};
  if (!files.enabled())
    files = tls_files_from(*this); // CAF's own openssl.* keys, e.g. from an INI file
  // CAF 0.17 would abort or hang at the first connection on a bad file, and
  // would fall back to anonymous TLS without one: check everything first.
  if (auto err = check_tls_files(files))
    return err;
  if (files.enabled()) {
    apply_tls(*this, files);
    load<caf::openssl::manager>();
    tls_enabled_ = true;
  }
  return caf::none;
}

} // namespace troupe
