// Cluster-wide config defaults and their checks.
#include "actors/config/cluster_config.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include <caf/io/middleman.hpp>
#include <caf/openssl/manager.hpp>

#include "actors/cluster/handshake.hpp"
#include "actors/cluster/tls.hpp"
#include "actors/runtime/core_pinning.hpp"
#include "actors/runtime/spinning_scheduler.hpp"
#include "messages/errors.hpp"
#include "messages/register.hpp"
#include "model/backend/cpu/gemm/gemm.hpp"

namespace troupe::detail {

cluster_config::cluster_config(std::string program, std::string about)
  : protocol_version(troupe_protocol_version), program_(std::move(program)),
    about_(std::move(about)) {
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
  // The middleman's own thread reads each message off the wire: a worker of
  // its own would add one more thread's wake-up to every push and answer
  // between processes, the bound of a round (docs/benchmarks.md).
  set("middleman.workers", size_t{0});
  // Troupe's messages are few and large, and replicas wait while the store
  // works: one central queue whose idle workers poll it briefly before they
  // sleep (actors/runtime/spinning_scheduler.hpp) hands a push to the shard
  // without waking a thread, where work stealing polls every worker's queue
  // (docs/benchmarks.md). scheduler.policy=sharing or =stealing picks CAF's own.
  set("scheduler.policy", caf::atom(spinning_scheduler_policy));
  // CPU replicas compute on the scheduler's threads (replica_needs_own_thread):
  // one per core, where CAF's default of at least 4 would have threads of
  // replicas and shards take turns on a machine with fewer cores.
  set("scheduler.max-threads", static_cast<size_t>(usable_cores()));
  bind(option_group::tls, tls_cert, "tls-cert", "PEM certificate of this process",
       {"FILE"});
  bind(option_group::tls, tls_key, "tls-key", "PEM private key of --tls-cert", {"FILE"});
  bind(option_group::tls, tls_ca, "tls-ca", "PEM certificate of the cluster CA that signs every peer",
       {"FILE"});
  bind(option_group::numerics, pin_cores, "pin-cores",
       "pin replica i and store shard i to core i % cores (the rest of CAF to core 0); each "
       "hand-over then wakes a thread, which on 2 cores is slower than the default");
  bind(option_group::numerics, gemm_kernel, "gemm-kernel",
       "CPU GEMM kernel: auto (the CPU's fastest), avx512, avx2, fma128 or portable");
  opt_group{custom_options_, "troupe"}
    .add(protocol_version, "protocol-version",
         "wire protocol version to announce (for compatibility tests)");
  defaults_ = content;
}

std::optional<int> cluster_config::parse_and_prepare(int argc, char** argv) {
  std::vector<std::string> args(argv + std::min(argc, 1), argv + argc);
  for (const auto& arg : args)
    if (arg == "--help" || arg == "-h" || arg == "-?" || arg == "--long-help") {
      std::fputs(help_text(arg == "--long-help").c_str(), stdout);
      return 0;
    }
  // CAF's own dump shows its settings; Troupe's shows the program's options.
  const auto dump = std::find(args.begin(), args.end(), "--dump-config");
  const bool dump_config_asked = dump != args.end();
  if (dump_config_asked)
    args.erase(dump);
  if (auto err = parse_options(std::move(args))) {
    std::fprintf(stderr, "error: %s\n", describe(err).c_str());
    return 2;
  }
  if (dump_config_asked) {
    std::fputs(dump_config().c_str(), stdout);
    return 0;
  }
  return std::nullopt;
}

std::vector<std::string> cluster_config::flags_as_caf_takes_them(
  std::vector<std::string> args) const {
  // CAF 0.17 takes a boolean option bare (--pin-cores) and refuses
  // --pin-cores=true: a value spelled out, as fit_options::set writes every
  // option, becomes the bare flag or nothing.
  std::vector<std::string> out;
  for (auto& arg : args) {
    const auto equals = arg.find('=');
    if (arg.rfind("--", 0) == 0 && equals != std::string::npos) {
      const auto* option = custom_options_.cli_long_name_lookup(arg.substr(2, equals - 2));
      const auto value = arg.substr(equals + 1);
      if (option != nullptr && option->type_name() == "boolean"
          && (value == "true" || value == "false")) {
        if (value == "true")
          out.push_back(arg.substr(0, equals));
        continue;
      }
    }
    out.push_back(std::move(arg));
  }
  return out;
}

caf::error cluster_config::parse_options(std::vector<std::string> args) {
  if (auto err = parse(flags_as_caf_takes_them(std::move(args))))
    return err.category() == caf::atom("troupe")
             ? err
             : make_troupe_error(troupe_errc::bad_config,
                                 docs_.describe_parse_error(err, custom_options_));
  return finish_options();
}

caf::error cluster_config::set_option(const std::string& name, const caf::config_value& value,
                                      bool as_text) {
  const auto* option = custom_options_.cli_long_name_lookup(name);
  const auto* text = caf::get_if<std::string>(&value);
  const std::string argument = "--" + name + "=" + (text ? *text : caf::to_string(value));
  if (option == nullptr)
    return make_troupe_error(troupe_errc::bad_config,
                             argument + ": unknown option (see --help)");
  caf::config_value typed = value;
  if (as_text) {
    auto parsed = option->parse(text ? *text : caf::to_string(value)); // stores it too
    if (!parsed)
      return make_troupe_error(troupe_errc::bad_config,
                               docs_.describe_bad_value(argument, name, *option));
    typed = std::move(*parsed);
  } else {
    if (option->check(value))
      return make_troupe_error(troupe_errc::bad_config,
                               docs_.describe_bad_value(argument, name, *option));
    option->store(value);
  }
  // Global options sit at the top of `content`, CAF's under their section.
  const auto category = option->category();
  const auto long_name = option->long_name();
  caf::put(content,
           category == "global" ? name
                                : std::string(category.begin(), category.end()) + "."
                                    + std::string(long_name.begin(), long_name.end()),
           std::move(typed));
  return caf::none;
}

caf::error cluster_config::finish_options() {
  if (auto err = docs_.check_minimums())
    return err;
  return prepare();
}

std::vector<std::pair<std::string, caf::config_value>> cluster_config::given_options() const {
  std::vector<std::pair<std::string, caf::config_value>> given;
  for (const auto& [key, value] : content) {
    const auto* section = caf::get_if<caf::settings>(&value);
    if (section == nullptr) {
      given.emplace_back(key, value);
      continue;
    }
    for (const auto& [name, entry] : *section) {
      const std::string full = key + "." + name;
      const auto* before = caf::get_if(&defaults_, full);
      if (caf::get_if<caf::settings>(&entry) == nullptr && (!before || *before != entry))
        given.emplace_back(full, entry);
    }
  }
  return given;
}

std::string cluster_config::help_text(bool long_help) const {
  return docs_.help_text(program_, about_, long_help ? &custom_options_ : nullptr);
}

caf::error cluster_config::check_config_file_keys() const {
  // CAF 0.17 keeps unknown keys of a config file without a word; a misspelled
  // option must not silently fall back to its default. Keys of the [global]
  // section sit at the top level of `content`; the other sections
  // (middleman, scheduler, ...) are dictionaries there.
  for (const auto& entry : content) {
    const auto* section = caf::get_if<caf::settings>(&entry.second);
    if (section == nullptr) {
      if (custom_options_.qualified_name_lookup("global", entry.first) == nullptr)
        return make_troupe_error(troupe_errc::bad_config,
                                 "unknown option '" + entry.first
                                   + "' in the config file (see --help)");
      continue;
    }
    for (const auto& key : *section)
      if (caf::get_if<caf::settings>(&key.second) == nullptr
          && custom_options_.qualified_name_lookup(entry.first, key.first) == nullptr)
        return make_troupe_error(troupe_errc::bad_config,
                                 "unknown option '" + key.first + "' in section [" + entry.first
                                   + "] of the config file (see --long-help)");
  }
  return caf::none;
}

caf::error cluster_config::prepare() {
  if (auto err = check_config_file_keys())
    return err;
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

} // namespace troupe::detail
