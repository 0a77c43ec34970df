// The optimizer a run trains with and its hyperparameters (Keras defaults):
// the store's shards build their optimizer from it, and it crosses the wire
// inside each shard's description.
#pragma once

#include <string>

#include "common/settings_fields.hpp"

namespace troupe {

/// Chooses an optimizer and its hyperparameters (model/optim/optimizer.hpp
/// lists the names).
struct optimizer_config {
  std::string name = "adam";
  float learning_rate = 1e-3f;
  float beta1 = 0.9f;    // adam
  float beta2 = 0.999f;  // adam
  float epsilon = 1e-7f; // adam
  float momentum = 0.0f; // sgd
  bool nesterov = false; // sgd
};

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
