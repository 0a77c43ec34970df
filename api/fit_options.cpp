// fit_options: each option held once as a typed value (or as the text
// set() was given, read when a fit applies it), and how a fit and a
// command line hand options over without turning them back into text.
#include "api/option_values.hpp"

#include <algorithm>
#include <utility>

#include "actors/config/cluster_config.hpp"
#include "common/settings_fields.hpp"

namespace troupe::detail {

void option_values::put(const std::string& name, caf::config_value value, bool text) {
  auto same = std::find_if(entries.begin(), entries.end(),
                           [&name](const option_value& e) { return e.name == name; });
  if (same == entries.end())
    entries.push_back(option_value{name, std::move(value), text});
  else
    *same = option_value{name, std::move(value), text};
}

const option_value* option_values::find(const std::string& name) const {
  for (const auto& entry : entries)
    if (entry.name == name)
      return &entry;
  return nullptr;
}

const option_values& option_access::values(const fit_options& options) {
  return *options.values_;
}

void option_access::put(fit_options& options, const std::string& name, caf::config_value value,
                        bool text) {
  auto next = std::make_shared<option_values>(*options.values_);
  next->put(name, std::move(value), text);
  options.values_ = std::move(next);
}

caf::error apply_options(const option_values& values, cluster_config& config) {
  for (const auto& entry : values.entries)
    if (auto err = config.set_option(entry.name, entry.value, entry.text))
      return err;
  return config.finish_options();
}

fit_options with_given_options(fit_options options, const cluster_config& config,
                               const std::vector<std::string>& skipped) {
  for (auto& [name, value] : config.given_options())
    if (std::find(skipped.begin(), skipped.end(), name) == skipped.end())
      option_access::put(options, name, std::move(value), false);
  return options;
}

} // namespace troupe::detail

namespace troupe {

namespace {

fit_options& put_typed(fit_options& options, const std::string& name, caf::config_value value) {
  detail::option_access::put(options, name, std::move(value), false);
  return options;
}

caf::config_value whole(uint64_t value) {
  return caf::config_value{static_cast<caf::config_value::integer>(value)};
}

caf::config_value text(const std::string& value) { return caf::config_value{value}; }

} // namespace

fit_options::fit_options() : values_(std::make_shared<const detail::option_values>()) {}
fit_options::~fit_options() = default;
fit_options::fit_options(const fit_options&) = default;
fit_options::fit_options(fit_options&&) noexcept = default;
fit_options& fit_options::operator=(const fit_options&) = default;
fit_options& fit_options::operator=(fit_options&&) noexcept = default;

fit_options& fit_options::set(const std::string& name, const std::string& value) {
  detail::option_access::put(*this, name, caf::config_value{value}, true);
  return *this;
}

fit_options& fit_options::epochs(uint32_t count) { return put_typed(*this, "epochs", whole(count)); }

fit_options& fit_options::batch_size(uint32_t samples) {
  return put_typed(*this, "batch-size", whole(samples));
}

fit_options& fit_options::mode(const std::string& policy) {
  return put_typed(*this, "mode", text(policy));
}

fit_options& fit_options::replicas(uint32_t count) {
  return put_typed(*this, "replicas", whole(count));
}

fit_options& fit_options::seed(uint64_t value) { return put_typed(*this, "seed", whole(value)); }

fit_options& fit_options::wire(const std::string& codec) {
  return put_typed(*this, "wire", text(codec));
}

fit_options& fit_options::nodes(const std::string& list) {
  return put_typed(*this, "nodes", text(list));
}

fit_options& fit_options::tensorboard(const std::string& dir) {
  return put_typed(*this, "tensorboard", text(dir));
}

fit_options& fit_options::validation_split(double fraction) {
  return put_typed(*this, "validation-split", caf::config_value{fraction});
}

fit_options& fit_options::extra_metrics(const std::string& list) {
  return put_typed(*this, "extra-metrics", text(list));
}

fit_options& fit_options::quiet() {
  quiet_ = true;
  return put_typed(*this, "progress", text("off"));
}

fit_options& fit_options::class_weights(const std::vector<float>& weights) {
  std::map<int, float> named;
  for (size_t c = 0; c < weights.size(); ++c)
    named[static_cast<int>(c)] = weights[c];
  return class_weights(named);
}

fit_options& fit_options::class_weights(const std::map<int, float>& weights) {
  std::string list; // every class named, so that a bad weight is refused by the option
  for (const auto& [cls, weight] : weights)
    list += (list.empty() ? "" : ",") + std::to_string(cls) + ":" + detail::to_setting_text(weight);
  return put_typed(*this, "class-weights", text(list));
}

fit_options& fit_options::start_from(const trained_model& model) {
  start_model_ = std::make_shared<const trained_model>(model);
  return *this;
}

bool fit_options::has(const std::string& name) const { return values_->find(name) != nullptr; }

std::vector<std::string> fit_options::names() const {
  std::vector<std::string> all;
  for (const auto& entry : values_->entries)
    all.push_back(entry.name);
  return all;
}

std::vector<std::string> fit_options::arguments() const {
  std::vector<std::string> all;
  for (const auto& entry : values_->entries) {
    const auto* as_text = caf::get_if<std::string>(&entry.value);
    all.push_back("--" + entry.name + "=" + (as_text ? *as_text : caf::to_string(entry.value)));
  }
  return all;
}

} // namespace troupe
