// Parsing, checking and applying class weights.
#include "model/class_weights.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <map>
#include <sstream>

#include "common/settings_fields.hpp"
#include "model/check.hpp"

namespace troupe::detail {

namespace {

error bad_entry(const std::string& entry, const std::string& why) {
  return fail(errc::invalid_argument, "--class-weights: '" + entry + "' " + why);
}

// One "CLASS:WEIGHT" entry.
expected<std::pair<size_t, float>> parse_entry(const std::string& entry) {
  const auto colon = entry.find(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == entry.size())
    return bad_entry(entry, "is not CLASS:WEIGHT (such as 1:5.5)");
  const std::string cls = entry.substr(0, colon);
  const std::string weight = entry.substr(colon + 1);
  if (!std::all_of(cls.begin(), cls.end(), [](char c) { return c >= '0' && c <= '9'; })
      || cls.size() > 9)
    return bad_entry(entry, "names class '" + cls + "': a class is a whole number, 0 or more");
  char* end = nullptr;
  errno = 0;
  const float value = std::strtof(weight.c_str(), &end);
  if (end != weight.c_str() + weight.size())
    return bad_entry(entry, "gives weight '" + weight + "': a weight is a number");
  if (!std::isfinite(value) || errno == ERANGE)
    return bad_entry(entry, "gives a weight that is not finite");
  if (value < 0.0f)
    return bad_entry(entry, "gives a negative weight: a weight is 0 or more");
  return std::make_pair(static_cast<size_t>(std::stoul(cls)), value);
}

} // namespace

expected<std::vector<float>> parse_class_weights(const std::string& text) {
  std::map<size_t, float> named;
  std::stringstream list(text);
  for (std::string entry; std::getline(list, entry, ',');) {
    auto parsed = parse_entry(entry);
    if (!parsed)
      return parsed.error();
    if (!named.emplace(parsed->first, parsed->second).second)
      return bad_entry(entry, "names class " + std::to_string(parsed->first) + " again");
  }
  if (!text.empty() && text.back() == ',')
    return bad_entry(text, "ends with a comma");
  if (named.empty())
    return std::vector<float>{};
  std::vector<float> weights(named.rbegin()->first + 1, 1.0f);
  for (const auto& [cls, weight] : named)
    weights[cls] = weight;
  return weights;
}

std::string class_weights_text(const std::vector<float>& weights) {
  std::string text;
  for (size_t c = 0; c < weights.size(); ++c)
    if (weights[c] != 1.0f)
      text += (text.empty() ? "" : ",") + std::to_string(c) + ":" + to_setting_text(weights[c]);
  return text;
}

std::string refuse_class_weights(const std::vector<float>& weights, int classes,
                                 const std::string& option) {
  if (weights.empty())
    return "";
  if (classes <= 0)
    return option + " weighs the classes of a classification set: this set is a "
                    "regression set (float targets, no classes)";
  if (weights.size() > static_cast<size_t>(classes))
    return option + ": class " + std::to_string(weights.size() - 1)
           + " is out of range: the data has classes 0.." + std::to_string(classes - 1);
  const auto padded = class_weights_for(weights, classes);
  if (std::all_of(padded.begin(), padded.end(), [](float w) { return w == 0.0f; }))
    return option + ": every class weighs 0: nothing would be trained";
  return "";
}

std::vector<float> class_weights_for(std::vector<float> weights, int classes) {
  if (!weights.empty() && weights.size() < static_cast<size_t>(classes))
    weights.resize(static_cast<size_t>(classes), 1.0f);
  return weights;
}

void sample_weights(const std::vector<float>& class_weights, const int32_t* labels,
                    size_t count, float* out) {
  for (size_t i = 0; i < count; ++i) {
    const auto label = static_cast<size_t>(labels[i]);
    TROUPE_ASSERT(label < class_weights.size());
    out[i] = class_weights[label];
  }
}

} // namespace troupe::detail
