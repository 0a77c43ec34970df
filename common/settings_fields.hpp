// Named fields: a settings struct lists its fields once, each under the name
// of its command-line option, in a `fields(x, visit)` overload. Its inspect()
// (the wire) and settings_text() (a run's fingerprint, and what a refused
// resume names) both walk that one list. No dependency: model/ and messages/
// both use it.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace troupe::detail {

/// Holds one field of a settings struct and the name of its option.
template <class T>
struct named_field {
  const char* name;
  T& value;
};

/// Names `value` as the option `name`.
template <class T>
named_field<T> field(const char* name, T& value) {
  return {name, value};
}

/// One setting as a person reads it: its option name and its value.
struct setting_text {
  std::string name;
  std::string value;
};

inline bool operator==(const setting_text& a, const setting_text& b) {
  return a.name == b.name && a.value == b.value;
}

/// Writes a value as settings_text shows it: floats with the fewest digits
/// that read back the same float, booleans as true or false.
inline std::string to_setting_text(const std::string& value) { return value; }
inline std::string to_setting_text(bool value) { return value ? "true" : "false"; }
inline std::string to_setting_text(float value) {
  char text[32];
  for (int digits = 6; digits <= 9; ++digits) { // the fewest that read back the same float
    std::snprintf(text, sizeof text, "%.*g", digits, static_cast<double>(value));
    if (std::strtof(text, nullptr) == value)
      break;
  }
  return text;
}
template <class T, class = std::enable_if_t<std::is_integral<T>::value>>
std::string to_setting_text(T value) {
  return std::to_string(value);
}

/// Lists choices as a sentence offers them: "a, b or c".
inline std::string choices_text(const std::vector<std::string>& choices) {
  std::string text;
  for (size_t i = 0; i < choices.size(); ++i)
    text += (i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ") + choices[i];
  return text;
}

/// Lists every named field of `x` (which has a fields() overload) with its
/// value as text, in the order fields() names them.
template <class T>
std::vector<setting_text> settings_text(const T& x) {
  std::vector<setting_text> out;
  fields(const_cast<T&>(x), [&out](auto... named) {
    (out.push_back(setting_text{named.name, to_setting_text(named.value)}), ...);
    return 0;
  });
  return out;
}

} // namespace troupe::detail
