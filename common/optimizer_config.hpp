// The optimizer's settings (<troupe/optimizer.hpp>) as named fields: the
// store's shards build their optimizer from them, and they cross the wire
// inside each shard's description.
#pragma once

#include <string>

#include <troupe/optimizer.hpp>

#include "common/settings_fields.hpp"

namespace troupe {

/// Visits every field of `x` under its option's name.
template <class Visit>
auto fields(optimizer_config& x, Visit&& visit) {
  return visit(field("optimizer", x.name), field("lr", x.learning_rate), field("beta1", x.beta1),
               field("beta2", x.beta2), field("epsilon", x.epsilon),
               field("momentum", x.momentum), field("nesterov", x.nesterov));
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, optimizer_config& x) {
  return fields(x, [&f](auto... named) { return f(named.value...); });
}

} // namespace troupe
