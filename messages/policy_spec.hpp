// Which update policy a run's store shards follow, and the settings of the
// consistency dial that tune it (docs/consistency.md). The policies read it
// (actors/policy/); it crosses the wire inside each shard's description.
#pragma once

#include <cstdint>
#include <string>

#include "common/settings_fields.hpp"

namespace troupe::detail {

/// Says how a gradient's learning rate depends on its staleness (async, ssp).
enum class staleness_lr_rule : uint8_t {
  none,    // every gradient at the learning rate
  inverse, // a gradient of staleness t at lr / max(1, t) (Zhang et al., IJCAI 2016)
};

/// Names a staleness_lr_rule as --staleness-lr does.
inline std::string to_string(staleness_lr_rule rule) {
  return rule == staleness_lr_rule::inverse ? "inverse" : "none";
}

inline std::string to_setting_text(staleness_lr_rule rule) { return to_string(rule); }

/// Tunes a policy: the knobs of the consistency dial. Each policy reads the
/// ones its descriptor lists (actors/policy/policy_registry.hpp).
struct policy_settings {
  uint32_t staleness = 0;       // ssp: pushes a replica may run ahead of the slowest;
                                // delayed: versions every gradient is stale
  uint32_t backup_replicas = 0; // sync: a round closes without the last this many
  staleness_lr_rule staleness_lr = staleness_lr_rule::none;
};

/// Names a run's update policy (--mode) and its settings.
struct policy_spec {
  std::string name = "sync";
  policy_settings settings;
};

/// Visits every field of `x` under its option's name.
template <class Visit>
auto fields(policy_spec& x, Visit&& visit) {
  return visit(field("mode", x.name), field("staleness", x.settings.staleness),
               field("backup-replicas", x.settings.backup_replicas),
               field("staleness-lr", x.settings.staleness_lr));
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, policy_spec& x) {
  return fields(x, [&f](auto... named) { return f(named.value...); });
}

} // namespace troupe::detail
