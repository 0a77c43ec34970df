// The optimizer's settings (<troupe/optimizer.hpp>) as named fields: the
// store's shards build their optimizer from them, and they cross the wire
// inside each shard's description. A schedule reads as its text form
// (docs/api.md): kind[:name=value,...].
#pragma once

#include <string>
#include <vector>

#include <troupe/optimizer.hpp>

#include "common/settings_fields.hpp"

namespace troupe::detail {

/// Lists the schedule kinds, in the order --help names them.
inline std::vector<std::string> lr_schedule_kinds() {
  return {"constant", "step", "exponential", "cosine"};
}

/// Lists the parameters a schedule of kind `kind` reads, in the order its
/// text form writes them; none for constant or an unknown kind.
inline std::vector<std::string> lr_schedule_parameters(const std::string& kind) {
  if (kind == "step")
    return {"every", "factor"};
  if (kind == "exponential")
    return {"decay_steps", "decay_rate", "staircase"};
  if (kind == "cosine")
    return {"decay_steps", "alpha", "warmup_steps", "warmup_target"};
  return {};
}

} // namespace troupe::detail

// Beside the public types, where argument-dependent lookup finds them
// (settings_text, CAF's inspectors).
namespace troupe {

/// Visits every field of `x` under its name in the schedule's text form.
template <class Visit>
auto fields(lr_schedule& x, Visit&& visit) {
  using detail::field;
  return visit(field("kind", x.kind), field("every", x.every), field("factor", x.factor),
               field("decay_steps", x.decay_steps), field("decay_rate", x.decay_rate),
               field("staircase", x.staircase), field("alpha", x.alpha),
               field("warmup_steps", x.warmup_steps), field("warmup_target", x.warmup_target));
}

/// Writes a schedule in its text form, every parameter of its kind spelled
/// out: "exponential:decay_steps=1000,decay_rate=0.96,staircase=false".
inline std::string to_setting_text(const lr_schedule& x) {
  std::string text = x.kind;
  const auto parameters = detail::lr_schedule_parameters(x.kind);
  fields(const_cast<lr_schedule&>(x), [&](auto... named) {
    auto add = [&](const auto& one) {
      for (const auto& name : parameters)
        if (name == one.name)
          text += (text.size() == x.kind.size() ? ":" : ",") + name + "="
                  + detail::to_setting_text(one.value);
    };
    (add(named), ...);
    return 0;
  });
  return text;
}

/// Visits every field of `x` under its option's name.
template <class Visit>
auto fields(optimizer_config& x, Visit&& visit) {
  using detail::field;
  return visit(field("optimizer", x.name), field("lr", x.learning_rate), field("beta1", x.beta1),
               field("beta2", x.beta2), field("epsilon", x.epsilon),
               field("momentum", x.momentum), field("nesterov", x.nesterov),
               field("rho", x.rho), field("centered", x.centered),
               field("weight-decay", x.weight_decay),
               field("global-clipnorm", x.global_clipnorm), field("lr-schedule", x.schedule));
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, lr_schedule& x) {
  return fields(x, [&f](auto... named) { return f(named.value...); });
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, optimizer_config& x) {
  return fields(x, [&f](auto... named) { return f(named.value...); });
}

} // namespace troupe
