// What a Troupe program's --help, --dump-config and option errors say about
// its options: each option's section, value, default, unit and minimum,
// recorded where cluster_config::bind binds it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#include <caf/config_option_set.hpp>
#include <caf/error.hpp>

namespace troupe::detail {

/// Names the section of --help an option is listed in, in this order.
enum class option_group : uint8_t {
  program, // a program's own options (command_line::add_option), listed first
  training,
  consistency,
  distribution,
  store,
  failures,
  checkpoints,
  output,
  node,
  tls,
  numerics,
};

/// Says more about an option than its help sentence (all optional), e.g.
/// `option_hint{"MS"}.in("ms").at_least(1)`.
struct option_hint {
  const char* value = nullptr;    // what to write after '=', e.g. "H:P,H:P"; else by type
  const char* unit = nullptr;     // e.g. "ms", "samples"
  const char* fallback = nullptr; // the default in words, where the value is not it
  uint64_t minimum = 0;           // whole numbers: the least value the program takes

  option_hint& in(const char* unit_name) {
    unit = unit_name;
    return *this;
  }
  option_hint& otherwise(const char* default_in_words) {
    fallback = default_in_words;
    return *this;
  }
  option_hint& at_least(uint64_t least) {
    minimum = least;
    return *this;
  }
};

/// Describes one option for people.
struct option_doc {
  option_group group;
  std::string name;
  std::string help;
  std::string value;          // "N", "X", "TEXT", a hint's; empty for a flag
  std::string unit;
  std::string default_text;   // empty: none shown
  uint64_t minimum = 0;
  std::function<std::string()> ini_value;   // the current value as an INI file writes it
  std::function<bool()> below_minimum;      // null unless a whole number with a minimum
};

/// Holds the docs of a program's own options.
class option_docs {
public:
  void add(option_doc doc) { docs_.push_back(std::move(doc)); }

  /// Renders --help: `about`, then every option by section with its
  /// default and unit, then the program's own flags. With `caf_options`,
  /// also CAF's own (--long-help).
  std::string help_text(const std::string& program, const std::string& about,
                        const caf::config_option_set* caf_options) const;

  /// Renders the current values as an INI file --config-file reads back.
  std::string dump_text() const;

  /// Returns the error for the first option below its minimum, if any.
  caf::error check_minimums() const;

  /// Says which argument CAF could not parse, and why, in words.
  std::string describe_parse_error(const caf::error& err,
                                   const caf::config_option_set& options) const;

  /// Says that `argument` ("--name=value") gives option --`name` a value
  /// it does not take, and what it takes.
  std::string describe_bad_value(const std::string& argument, const std::string& name,
                                 const caf::config_option& option) const;

private:
  const option_doc* find(const std::string& name) const;

  std::vector<option_doc> docs_;
};

/// Writes a value as it appears in --help, --dump-config and INI files.
std::string ini_text(const std::string& value);
inline std::string ini_text(bool value) { return value ? "true" : "false"; }
std::string ini_text(float value);
std::string ini_text(double value);
template <class T, class = std::enable_if_t<std::is_integral<T>::value>>
std::string ini_text(T value) {
  return std::to_string(value);
}

} // namespace troupe::detail
