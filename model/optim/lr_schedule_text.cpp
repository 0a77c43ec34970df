// Reading a schedule's text form into an lr_schedule, field by field as
// fields(lr_schedule) names them.
#include "model/optim/lr_schedule_text.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <type_traits>
#include <vector>

namespace troupe::detail {

namespace {

bool read_value(const std::string& text, std::string& out) {
  out = text;
  return true;
}

bool read_value(const std::string& text, bool& out) {
  if (text != "true" && text != "false")
    return false;
  out = text == "true";
  return true;
}

bool read_value(const std::string& text, uint64_t& out) {
  const auto digit = [](char c) { return c >= '0' && c <= '9'; };
  if (text.empty() || !std::all_of(text.begin(), text.end(), digit))
    return false;
  errno = 0;
  out = std::strtoull(text.c_str(), nullptr, 10);
  return errno == 0;
}

bool read_value(const std::string& text, float& out) {
  char* end = nullptr;
  errno = 0;
  out = std::strtof(text.c_str(), &end);
  return !text.empty() && end == text.c_str() + text.size() && errno == 0 && std::isfinite(out);
}

const char* type_words(const std::string&) { return "a word"; }
const char* type_words(bool) { return "true or false"; }
const char* type_words(uint64_t) { return "a whole number"; }
const char* type_words(float) { return "a number"; }

// Sets the parameter `name` of `s` from `value`; an error says why not.
std::string set_parameter(lr_schedule& s, const std::string& name, std::string value) {
  std::string why;
  fields(s, [&](auto... named) {
    auto set = [&](auto& one) {
      if (name != one.name)
        return;
      if (value.empty() && std::is_same<std::decay_t<decltype(one.value)>, bool>::value)
        value = "true"; // a flag standing alone
      if (!read_value(value, one.value))
        why = name + " takes " + type_words(one.value) + ", not '" + value + "'";
    };
    (set(named), ...);
    return 0;
  });
  return why;
}

} // namespace

expected<lr_schedule> parse_lr_schedule(const std::string& text) {
  const auto refuse = [&text](const std::string& why) {
    return fail(errc::invalid_argument, "'" + text + "': " + why);
  };
  lr_schedule s;
  const auto colon = text.find(':');
  s.kind = text.substr(0, colon);
  const auto kinds = lr_schedule_kinds();
  if (std::find(kinds.begin(), kinds.end(), s.kind) == kinds.end())
    return refuse("no schedule is called '" + s.kind + "' (expected " + choices_text(kinds) + ")");
  if (colon == std::string::npos)
    return s;
  const auto parameters = lr_schedule_parameters(s.kind);
  std::vector<std::string> seen;
  std::stringstream list(text.substr(colon + 1));
  for (std::string item; std::getline(list, item, ',');) {
    const auto equals = item.find('=');
    const std::string name = item.substr(0, equals);
    if (std::find(parameters.begin(), parameters.end(), name) == parameters.end())
      return refuse(parameters.empty() ? s.kind + " takes no parameters"
                                       : s.kind + " takes " + choices_text(parameters) + ", not '"
                                           + name + "'");
    if (std::find(seen.begin(), seen.end(), name) != seen.end())
      return refuse(name + " is given twice");
    seen.push_back(name);
    const std::string value = equals == std::string::npos ? "" : item.substr(equals + 1);
    if (auto why = set_parameter(s, name, value); !why.empty())
      return refuse(why);
  }
  return s;
}

} // namespace troupe::detail
