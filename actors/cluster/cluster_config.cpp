// Cluster-wide config defaults and their checks.
#include "actors/cluster/cluster_config.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>

#include <caf/io/middleman.hpp>
#include <caf/openssl/manager.hpp>

#include "actors/threads/core_pinning.hpp"
#include "actors/cluster/handshake.hpp"
#include "actors/threads/spinning_scheduler.hpp"
#include "actors/cluster/tls.hpp"
#include "messages/errors.hpp"
#include "messages/register.hpp"
#include "model/backend/cpu/gemm/gemm.hpp"

namespace troupe {

namespace {

// The command-line argument a CAF parser error names, or "".
std::string failed_argument(const caf::error& err) {
  const auto& context = err.context();
  if (!context.match_element<caf::settings>(0))
    return "";
  const auto argument = caf::get_if<std::string>(&context.get_as<caf::settings>(0), "argument");
  return argument ? *argument : "";
}

// What a value of CAF's option type `type` looks like, for a person.
std::string value_kind(caf::string_view type) {
  const std::string name(type.begin(), type.end());
  if (name.rfind("uint", 0) == 0)
    return "a whole number, 0 or more";
  if (name.rfind("int", 0) == 0)
    return "a whole number";
  if (name.rfind("real", 0) == 0)
    return "a number";
  if (name == "boolean")
    return "true or false";
  if (name == "timespan")
    return "a duration such as 500ms or 2s";
  return "a " + name;
}

// Says which argument CAF could not parse, and why, in words.
std::string describe_parse_error(const caf::error& err, const caf::config_option_set& options) {
  const std::string argument = failed_argument(err);
  if (err.category() != caf::atom("parser") || argument.empty())
    return "bad option or value (see --help): " + caf::actor_system_config::render(err);
  if (static_cast<caf::pec>(err.code()) == caf::pec::not_an_option)
    return argument + ": unknown option (see --help)";
  const auto dashes = std::min(argument.find_first_not_of('-'), argument.size());
  const auto name = argument.substr(dashes, argument.find('=') - dashes);
  if (const auto* option = options.cli_long_name_lookup(name))
    return argument + ": --" + name + " takes " + value_kind(option->type_name())
           + " (see --help)";
  return argument + ": bad value (see --help)";
}

} // namespace

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
  // sleep (actors/threads/spinning_scheduler.hpp) beats work stealing's
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
    std::fprintf(stderr, "error: %s\n", describe_parse_error(err, custom_options_).c_str());
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
