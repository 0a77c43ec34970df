// The one check every actor type a node spawns for a remote peer passes its
// arguments through: they come off the wire, so their count, their types and
// the handles among them are checked before a factory touches them.
#pragma once

#include <cstdio>
#include <string>
#include <utility>

#include <caf/actor_factory.hpp>
#include <caf/message.hpp>

namespace troupe::detail {

namespace spawn_detail {

template <class... Ts, class F, size_t... I>
caf::actor_factory_result with_elements(caf::message& args, F& f, std::index_sequence<I...>) {
  return f(args.get_mutable_as<Ts>(I)...);
}

} // namespace spawn_detail

/// Wraps `make` (a factory for `type` taking Ts...) so that a spawn request
/// whose arguments are not exactly Ts..., or whose `check(Ts&...)` returns a
/// reason, is refused with one line on stderr and CAF's
/// cannot_spawn_actor_from_arguments; otherwise `adjust(config, Ts&...)` may
/// change the job and the actor's flags before `make` runs.
template <class... Ts, class Check, class Adjust>
caf::actor_factory checked_actor_factory(std::string type, Check check, Adjust adjust,
                                         caf::actor_factory make) {
  return [type = std::move(type), check = std::move(check), adjust = std::move(adjust),
          make = std::move(make)](caf::actor_config& config,
                                  caf::message& args) -> caf::actor_factory_result {
    auto refuse = [&](const std::string& why) -> caf::actor_factory_result {
      std::fprintf(stderr, "troupe node: refused to spawn %s: %s\n", type.c_str(), why.c_str());
      return {};
    };
    if (!args.match_elements<Ts...>())
      return refuse("its arguments are not the " + std::to_string(sizeof...(Ts))
                    + " values this node's version takes");
    auto checked = [&](Ts&... xs) -> caf::actor_factory_result {
      const std::string why = check(static_cast<const Ts&>(xs)...);
      if (!why.empty())
        return refuse(why);
      adjust(config, xs...);
      return make(config, args);
    };
    return spawn_detail::with_elements<Ts...>(args, checked, std::index_sequence_for<Ts...>{});
  };
}

} // namespace troupe::detail
