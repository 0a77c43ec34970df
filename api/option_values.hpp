// What a fit_options holds: each option set, once, as a typed value or as
// the text fit_options::set was given, which is read as the option's type
// once, when the fit applies it to its program's options.
#pragma once

#include <string>
#include <vector>

#include <caf/config_value.hpp>

#include <troupe/fit.hpp>

namespace troupe::detail {

class cluster_config;

/// One option set on a fit_options.
struct option_value {
  std::string name;         // without "--": "epochs", "scheduler.max-threads"
  caf::config_value value;  // typed, or the text to read when `text`
  bool text = false;
};

/// The options set, in the order first set; setting one again replaces it.
struct option_values {
  std::vector<option_value> entries;

  void put(const std::string& name, caf::config_value value, bool text);
  const option_value* find(const std::string& name) const;
};

/// Reads and sets what a fit_options holds.
struct option_access {
  static const option_values& values(const fit_options& options);
  static void put(fit_options& options, const std::string& name, caf::config_value value,
                  bool text);
};

/// Sets every option of `values` on `config` (which reads each text once),
/// then checks and prepares it; an error names the first option refused.
caf::error apply_options(const option_values& values, cluster_config& config);

/// Returns `options` with each option `config` read from its command line
/// and config file set, as read, but for those named in `skipped`.
fit_options with_given_options(fit_options options, const cluster_config& config,
                               const std::vector<std::string>& skipped);

} // namespace troupe::detail
