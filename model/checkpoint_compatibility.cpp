// Whether a checkpoint can resume a run: the same model, the same settings
// (named one by one where the file records them), the same parameter count.
#include "model/checkpoint.hpp"

#include <algorithm>
#include <cstdio>

#include "model/layers/layer_spec.hpp"
#include "model/model_spec.hpp"

namespace troupe::detail {

namespace {

// The one spelling of a built-in or layered model's text; a registered
// model's as it is.
std::string canonical_model(const std::string& text) {
  if (names_layered_model(text)) {
    auto stack = parse_stack_spec(text);
    return stack ? to_string(*stack) : text;
  }
  auto spec = parse_model_spec(text);
  return spec ? to_string(*spec) : text;
}

std::string hex(uint64_t value) {
  char text[19];
  std::snprintf(text, sizeof(text), "0x%016llx", static_cast<unsigned long long>(value));
  return text;
}

// "--lr=0.001 there, 0.002 here; --seed=42 there, 7 here": each setting of
// `now` whose value in `saved` differs, or that `saved` lacks, and each that
// only `saved` has (one named only when set, such as --class-weights).
std::string differences(const std::vector<setting_text>& saved,
                        const std::vector<setting_text>& now) {
  std::string text;
  for (const auto& setting : saved)
    if (std::none_of(now.begin(), now.end(),
                     [&](const setting_text& s) { return s.name == setting.name; }))
      text += (text.empty() ? "--" : "; --") + setting.name + "=" + setting.value
              + " there, not set here";
  for (const auto& setting : now) {
    auto found = std::find_if(saved.begin(), saved.end(), [&](const setting_text& s) {
      return s.name == setting.name;
    });
    if (found != saved.end() && found->value == setting.value)
      continue;
    text += (text.empty() ? "--" : "; --") + setting.name + "="
            + (found == saved.end() ? "(not recorded)" : found->value) + " there, "
            + setting.value + " here";
  }
  return text;
}

} // namespace

status check_compatible(const checkpoint& c, const std::string& model,
                        const std::vector<setting_text>& settings, size_t parameter_count,
                        const std::string& path) {
  if (canonical_model(c.model) != canonical_model(model))
    return fail(errc::invalid_argument, "checkpoint " + path + " was written for model "
                                                + c.model + ", this run trains " + model);
  if (!c.settings.empty()) {
    if (auto differ = differences(c.settings, settings); !differ.empty())
      return fail(errc::invalid_argument,
                  "checkpoint " + path + " was written by a run with other settings ("
                    + differ + "): resume with the original settings");
  } else if (c.config_fingerprint != settings_fingerprint(settings)) {
    return fail(errc::invalid_argument,
                "checkpoint " + path + " was written with other run settings than this run's, "
                  "or by an older Troupe (settings fingerprint " + hex(c.config_fingerprint)
                  + " in the file, " + hex(settings_fingerprint(settings))
                  + " now; a file of this format does not record which)");
  }
  if (c.params.size() != parameter_count)
    return fail(errc::invalid_argument,
                "checkpoint " + path + " holds " + std::to_string(c.params.size())
                  + " parameters, this run's model has " + std::to_string(parameter_count));
  return {};
}

} // namespace troupe::detail
