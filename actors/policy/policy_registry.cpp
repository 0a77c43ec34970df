// The policy registry: the built-in policies, those registered at run time,
// and the checks of a run's policy settings against them.
#include "actors/policy/policy_registry.hpp"

#include <algorithm>

#include "actors/policy/builtin_policies.hpp"
#include "actors/policy/stop_on_loss.hpp"
#include "common/named_registry.hpp"

namespace troupe::detail {

#define TROUPE_DECLARE_POLICY(name) policy_descriptor name##_policy_descriptor();
TROUPE_BUILTIN_POLICIES(TROUPE_DECLARE_POLICY)
#undef TROUPE_DECLARE_POLICY

namespace {

using registry = named_registry<policy_descriptor>;

registry& the_registry() {
  static registry* all = [] {
    auto* r = new registry; // never destroyed: actors on other threads may read it at exit
    const auto add = [r](policy_descriptor d) {
      const std::string name = d.name; // before the move
      r->add(name, std::move(d));
    };
#define TROUPE_LIST_POLICY(name) add(name##_policy_descriptor());
    TROUPE_BUILTIN_POLICIES(TROUPE_LIST_POLICY)
#undef TROUPE_LIST_POLICY
    return r;
  }();
  return *all;
}

// "a", "a or b", "a, b or c": names as a sentence lists them.
std::string either(const std::vector<std::string>& names) {
  std::string text;
  for (size_t i = 0; i < names.size(); ++i)
    text += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return text;
}

// The policies whose descriptor lists the setting `option`.
std::vector<std::string> policies_with(const std::string& option) {
  std::vector<std::string> names;
  for (const auto& name : policy_names()) {
    const auto& applies = find_policy(name)->settings;
    if (std::find(applies.begin(), applies.end(), option) != applies.end())
      names.push_back(name);
  }
  return names;
}

} // namespace

caf::error register_policy(policy_descriptor descriptor) {
  if (!descriptor.traits || !descriptor.make)
    return make_troupe_error(troupe_errc::bad_config,
                             "update policy '" + descriptor.name + "' needs traits and make");
  const std::string name = descriptor.name;
  if (!the_registry().add(name, std::move(descriptor)))
    return make_troupe_error(troupe_errc::bad_config,
                             "an update policy named '" + name + "' exists");
  return caf::none;
}

const policy_descriptor* find_policy(const std::string& name) {
  return the_registry().find_entry(name); // entries are never removed
}

std::vector<std::string> policy_names() {
  return the_registry().names();
}

caf::error check_policy_spec(const policy_spec& spec) {
  const policy_descriptor* policy = find_policy(spec.name);
  if (policy == nullptr)
    return make_troupe_error(troupe_errc::bad_config, "--mode: '" + spec.name + "' (expected "
                                                        + either(policy_names()) + ")");
  const auto defaults = settings_text(policy_spec{spec.name, {}});
  const auto chosen = settings_text(spec);
  for (size_t i = 0; i < chosen.size(); ++i) {
    const auto& option = chosen[i].name;
    const auto& applies = policy->settings;
    if (chosen[i] == defaults[i] || option == "mode"
        || std::find(applies.begin(), applies.end(), option) != applies.end())
      continue;
    return make_troupe_error(troupe_errc::bad_config,
                             "--" + option + "=" + chosen[i].value + " works with --mode="
                               + either(policies_with(option)) + ", not " + spec.name);
  }
  if (policy->refuse)
    if (auto why = policy->refuse(spec.settings); !why.empty())
      return make_troupe_error(troupe_errc::bad_config, why);
  return caf::none;
}

policy_traits traits_of(const policy_spec& spec) {
  const policy_descriptor* policy = find_policy(spec.name);
  return policy ? policy->traits(spec.settings) : policy_traits{};
}

caf::expected<std::unique_ptr<update_policy>>
make_update_policy(const policy_spec& spec, replica_loss_action on_loss, uint32_t shard) {
  if (auto err = check_policy_spec(spec))
    return err;
  auto policy = find_policy(spec.name)->make(spec.settings);
  if (on_loss == replica_loss_action::abort)
    return std::unique_ptr<update_policy>(new stop_on_loss(std::move(policy), shard));
  return policy;
}

} // namespace troupe::detail
