// The actor system config every Troupe program starts from, and the one
// command-line binder its programs share: all message types, the middleman
// with the same heartbeat settings on every node, the cluster's TLS
// options, and each option bound with its section, default and unit for
// --help (option_docs.hpp).
#pragma once

#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <caf/actor_system_config.hpp>

#include "actors/config/option_docs.hpp"

namespace troupe::detail {

/// Registers messages and sets cluster-wide middleman defaults:
/// heartbeat every 200 ms, a peer silent for 1 s is dropped (a frozen process
/// or cut link is detected in ~1.1 s), automatic connections off (they would
/// open an unguarded plaintext port on every interface; placement links the
/// nodes that must talk directly), and a work-sharing scheduler whose idle
/// workers poll for 50 us before they sleep ("spinning"), one thread per
/// usable core.
class cluster_config : public caf::actor_system_config {
public:
  /// A config for `program` (as --help names it), whose --help opens with `about`.
  explicit cluster_config(std::string program = "troupe", std::string about = "");

  /// Binds `var` to --name=VALUE: listed under `group` in --help with
  /// `help`, var's current value as its default (or hint.fallback), and the
  /// hint's unit and minimum.
  template <class T>
  cluster_config& bind(option_group group, T& var, const char* name, const std::string& help,
                       option_hint hint = {});

  /// Checks what parse() read and loads the modules it needs; call it after
  /// parse() and before building the actor system.
  caf::error prepare();

  /// Parses the command line and config file, then prepare(). Returns the
  /// exit code when the program should stop here (0 after --help or
  /// --dump-config, 2 after printing what was wrong), nothing when it should
  /// go on.
  std::optional<int> parse_and_prepare(int argc, char** argv);

  /// Reads `args` (the command line without the program's name, and the
  /// file of any --config-file) into the bound options, then prepare(); an
  /// error says in words what was wrong. A boolean option may come bare
  /// (--pin-cores) or as --pin-cores=true or =false.
  caf::error parse_options(std::vector<std::string> args);

  /// Sets option --`name` ("epochs", or CAF's "scheduler.max-threads") to
  /// `value`, as the command line would: a value of the option's type, or
  /// with `as_text` a text read as that type. Call finish_options() after
  /// the last one. An error names the option and says what it takes.
  caf::error set_option(const std::string& name, const caf::config_value& value, bool as_text);

  /// Checks the options set (minimums), then prepare().
  caf::error finish_options();

  /// Returns the options parse_options read from the command line and any
  /// config file, each once, by the name set_option takes, as read.
  std::vector<std::pair<std::string, caf::config_value>> given_options() const;

  /// Returns `args` with each boolean option given as =true made bare and
  /// each given as =false left out, as CAF 0.17 takes them.
  std::vector<std::string> flags_as_caf_takes_them(std::vector<std::string> args) const;

  /// Returns the text of --help, or with `long_help` of --long-help.
  std::string help_text(bool long_help) const;

  /// Returns the text of --dump-config: every bound option with its value.
  std::string dump_config() const { return docs_.dump_text(); }

  /// Tells whether the links use mutual TLS (known after prepare()).
  bool tls() const { return tls_enabled_; }

  std::string tls_cert;
  std::string tls_key;
  std::string tls_ca;
  size_t protocol_version;
  bool pin_cores = false;
  std::string gemm_kernel = "auto";

private:
  caf::error check_config_file_keys() const;

  std::string program_;
  std::string about_;
  option_docs docs_;
  caf::settings defaults_; // content before any option is read
  bool tls_enabled_ = false;
};

template <class T>
cluster_config& cluster_config::bind(option_group group, T& var, const char* name,
                                     const std::string& help, option_hint hint) {
  opt_group{custom_options_, "global"}.add(var, name, help);
  option_doc doc;
  doc.group = group;
  doc.name = name;
  doc.help = help;
  doc.unit = hint.unit ? hint.unit : "";
  doc.minimum = hint.minimum;
  doc.ini_value = [&var] { return ini_text(var); };
  if constexpr (std::is_same<T, bool>::value) {
    doc.value = hint.value ? hint.value : "";
  } else if constexpr (std::is_integral<T>::value) {
    doc.value = hint.value ? hint.value : "N";
    doc.default_text = std::to_string(var);
    if (hint.minimum > 0)
      doc.below_minimum = [&var, minimum = hint.minimum] {
        return static_cast<uint64_t>(var) < minimum;
      };
  } else if constexpr (std::is_floating_point<T>::value) {
    doc.value = hint.value ? hint.value : "X";
    doc.default_text = ini_text(var);
  } else {
    doc.value = hint.value ? hint.value : "TEXT";
    doc.default_text = var;
  }
  if (hint.fallback)
    doc.default_text = hint.fallback;
  docs_.add(std::move(doc));
  return *this;
}

} // namespace troupe::detail
