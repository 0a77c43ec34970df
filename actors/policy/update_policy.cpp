// The policy factory: the one place that maps a mode name to a policy. Adding
// a policy adds its header and one entry below (docs/architecture.md).
#include "actors/policy/update_policy.hpp"

#include <functional>
#include <utility>

#include "actors/policy/async_policy.hpp"
#include "actors/policy/delayed_policy.hpp"
#include "actors/policy/ssp_policy.hpp"
#include "actors/policy/sync_policy.hpp"

namespace troupe {

namespace {

using policy_maker = std::function<std::unique_ptr<update_policy>(
  size_t parameter_count, const policy_settings& settings)>;

// Every policy by its --mode name, in the order help texts list them.
const std::vector<std::pair<std::string, policy_maker>>& policies() {
  static const std::vector<std::pair<std::string, policy_maker>> all = {
    {"sync",
     [](size_t count, const policy_settings& s) {
       return std::make_unique<sync_policy>(count, s.backup_replicas);
     }},
    {"async",
     [](size_t, const policy_settings& s) { return std::make_unique<async_policy>(s); }},
    // Staleness 0 is lockstep: sync, with its reduction and its bits.
    {"ssp",
     [](size_t count, const policy_settings& s) -> std::unique_ptr<update_policy> {
       if (s.staleness == 0)
         return std::make_unique<sync_policy>(count);
       return std::make_unique<ssp_policy>(s);
     }},
    {"delayed",
     [](size_t, const policy_settings& s) {
       return std::make_unique<delayed_policy>(s.staleness);
     }},
  };
  return all;
}

} // namespace

expected<std::unique_ptr<update_policy>> make_update_policy(const std::string& mode,
                                                            size_t parameter_count,
                                                            const policy_settings& settings) {
  std::string known;
  for (const auto& [name, make] : policies()) {
    if (name == mode)
      return make(parameter_count, settings);
    known += (known.empty() ? "" : ", ") + name;
  }
  return fail(model_errc::invalid_argument,
              "unknown mode '" + mode + "' (expected one of " + known + ")");
}

const std::vector<std::string>& update_policy_modes() {
  static const std::vector<std::string> modes = [] {
    std::vector<std::string> names;
    for (const auto& entry : policies())
      names.push_back(entry.first);
    return names;
  }();
  return modes;
}

} // namespace troupe
