// Rendering a program's options for people: --help, --dump-config, errors.
#include "actors/config/option_docs.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>

#include <caf/actor_system_config.hpp>
#include <caf/config_option.hpp>
#include <caf/pec.hpp>
#include <caf/settings.hpp>

#include "common/settings_fields.hpp"
#include "messages/errors.hpp"

namespace troupe::detail {

namespace {

const char* title(option_group group) {
  switch (group) {
    case option_group::program: return "This program";
    case option_group::training: return "Training";
    case option_group::consistency: return "Consistency (docs/consistency.md)";
    case option_group::distribution: return "Replicas and nodes (docs/distributed.md)";
    case option_group::store: return "The variable store";
    case option_group::failures: return "Failures";
    case option_group::checkpoints: return "Checkpoints";
    case option_group::output: return "Output (docs/plots.md)";
    case option_group::node: return "This node";
    case option_group::tls: return "Mutual TLS (docs/tls.md)";
    case option_group::numerics: return "Numerics (docs/backends.md)";
  }
  return "Options";
}

// "  --name=VALUE" padded, then the help wrapped after it.
std::string option_line(const std::string& left, const std::string& text) {
  constexpr size_t column = 28;
  constexpr size_t width = 100;
  std::string out = "  " + left;
  out += out.size() + 1 < column ? std::string(column - out.size(), ' ') : "\n" + std::string(column, ' ');
  size_t used = column;
  size_t start = 0;
  while (start < text.size()) {
    auto end = text.find(' ', start);
    if (end == std::string::npos)
      end = text.size();
    const auto word = text.substr(start, end - start);
    if (used + word.size() > width && used > column) {
      out.pop_back(); // the space after the last word
      out += "\n" + std::string(column, ' ');
      used = column;
    }
    out += word + " ";
    used += word.size() + 1;
    start = end + 1;
  }
  out.pop_back();
  return out + "\n";
}

// The command-line argument a CAF parser error names, or "".
std::string failed_argument(const caf::error& err) {
  const auto& context = err.context();
  if (!context.match_element<caf::settings>(0))
    return "";
  const auto argument = caf::get_if<std::string>(&context.get_as<caf::settings>(0), "argument");
  return argument ? *argument : "";
}

// What a value of CAF's option type `type` looks like, for a person.
std::string value_kind(caf::string_view type, uint64_t minimum) {
  const std::string name(type.begin(), type.end());
  if (name.rfind("uint", 0) == 0)
    return "a whole number, " + std::to_string(minimum) + " or more";
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

} // namespace

std::string ini_text(const std::string& value) {
  std::string out = "\"";
  for (char c : value)
    out += c == '"' || c == '\\' ? std::string{'\\', c} : std::string{c};
  return out + "\"";
}

std::string ini_text(float value) {
  std::string out = to_setting_text(value);
  if (out.find_first_of(".en") == std::string::npos)
    out += ".0"; // CAF reads 1 as an integer, not a number
  return out;
}

std::string ini_text(double value) {
  char text[32];
  for (int digits = 6; digits <= 17; ++digits) { // the shortest text that reads back
    std::snprintf(text, sizeof(text), "%.*g", digits, value);
    if (std::strtod(text, nullptr) == value)
      break;
  }
  std::string out = text;
  if (out.find_first_of(".en") == std::string::npos)
    out += ".0"; // CAF reads 1 as an integer, not a number
  return out;
}

const option_doc* option_docs::find(const std::string& name) const {
  auto found = std::find_if(docs_.begin(), docs_.end(),
                            [&name](const option_doc& doc) { return doc.name == name; });
  return found == docs_.end() ? nullptr : &*found;
}

std::string option_docs::help_text(const std::string& program, const std::string& about,
                                   const caf::config_option_set* caf_options) const {
  std::string out = "Usage: " + program + " [--option=value ...]\n" + about + "\n";
  std::map<option_group, std::vector<const option_doc*>> by_group;
  for (const auto& doc : docs_)
    by_group[doc.group].push_back(&doc);
  for (const auto& [group, docs] : by_group) {
    out += std::string("\n") + title(group) + ":\n";
    for (const auto* doc : docs) {
      std::string text = doc->help;
      if (!doc->unit.empty() || !doc->default_text.empty())
        text += " (" + (doc->unit.empty() ? "" : "in " + doc->unit)
                + (!doc->unit.empty() && !doc->default_text.empty() ? "; " : "")
                + (doc->default_text.empty() ? "" : "default: " + doc->default_text) + ")";
      out += option_line("--" + doc->name + (doc->value.empty() ? "" : "=" + doc->value), text);
    }
  }
  out += "\nThis program:\n";
  out += option_line("--help, -h", "print this help to stdout and exit");
  out += option_line("--long-help", "this help and CAF's own options (middleman, scheduler, ...)");
  out += option_line("--config-file=FILE",
                     "read options from an INI file: the keys above under [global], strings "
                     "in quotes; the command line wins; an unknown key is an error");
  out += option_line("--dump-config",
                     "print every option above with its value (defaults, the file's, the "
                     "command line's) as such a file, and exit");
  if (caf_options == nullptr)
    return out;
  out += "\nCAF (--section.name=VALUE, or under [section] in a config file):\n";
  for (const auto& option : *caf_options) {
    const auto category = std::string(option.category().begin(), option.category().end());
    if (category == "global")
      continue;
    const auto name = std::string(option.long_name().begin(), option.long_name().end());
    const auto type = std::string(option.type_name().begin(), option.type_name().end());
    out += option_line("--" + category + "." + name + "=" + type,
                       std::string(option.description().begin(), option.description().end()));
  }
  return out;
}

std::string option_docs::dump_text() const {
  std::string out = "[global]\n";
  for (const auto& doc : docs_)
    out += doc.name + "=" + doc.ini_value() + "\n";
  return out;
}

caf::error option_docs::check_minimums() const {
  for (const auto& doc : docs_)
    if (doc.below_minimum && doc.below_minimum())
      return make_troupe_error(troupe_errc::bad_config,
                               "--" + doc.name + "=" + doc.ini_value() + ": --" + doc.name
                                 + " takes a whole number, " + std::to_string(doc.minimum)
                                 + " or more");
  return caf::none;
}

std::string option_docs::describe_parse_error(const caf::error& err,
                                              const caf::config_option_set& options) const {
  if (err == caf::sec::cannot_open_file && err.context().match_element<std::string>(0))
    return "--config-file=" + err.context().get_as<std::string>(0)
           + ": cannot open the file (is the path right?)";
  const std::string argument = failed_argument(err);
  if (err.category() != caf::atom("parser") || argument.empty())
    return "bad option or value (see --help): " + caf::actor_system_config::render(err);
  if (static_cast<caf::pec>(err.code()) == caf::pec::not_an_option)
    return argument + ": unknown option (see --help)";
  const auto dashes = std::min(argument.find_first_not_of('-'), argument.size());
  const auto name = argument.substr(dashes, argument.find('=') - dashes);
  if (const auto* option = options.cli_long_name_lookup(name))
    return describe_bad_value(argument, name, *option);
  return argument + ": bad value (see --help)";
}

std::string option_docs::describe_bad_value(const std::string& argument,
                                            const std::string& name,
                                            const caf::config_option& option) const {
  const auto* doc = find(name);
  return argument + ": --" + name + " takes "
         + value_kind(option.type_name(), doc ? doc->minimum : 0) + " (see --help)";
}

} // namespace troupe::detail
