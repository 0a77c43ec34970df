// Who belongs to a run now: its membership epoch, the generation its store
// heals start, the answers fenced off, and the respawns and stopped actors
// in between; with the guard that drops a continuation begun in a
// generation replaced since.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <caf/actor_addr.hpp>
#include <caf/detail/type_traits.hpp>

#include "actors/report/fit_observer.hpp"

namespace troupe::detail {

/// Holds a respawn under way: which replica, why, and since when; parked
/// (with an id) while it waits for a node to join (--respawn-timeout).
struct parked_respawn {
  size_t index = 0;
  std::string what;
  replacement_record record;
  std::chrono::steady_clock::time_point lost_at;
  uint64_t id = 0;
};

/// Holds a store heal whose replicas from `next` on found no place, while it
/// waits for a node to join (--respawn-timeout): then `resume` goes on.
struct parked_heal {
  size_t next = 0;
  std::string what;
  std::function<void(size_t node)> resume;
  uint64_t id = 0;
};

/// Holds an actor a store heal stopped, until its down message comes (which
/// tells whether its node is gone).
struct retired_actor {
  caf::actor_addr address;
  size_t node; // an index into the node table, or node_table::here
};

struct run_membership;

template <class F, class Args = typename caf::detail::get_callable_trait<F>::arg_types>
class generation_guard;

/// Holds the run's membership; the coordinator's state owns the one.
struct run_membership {
  // One more at every respawn, move, join and heal; each replica's actor
  // belongs to the one it was spawned in (its slot's), which the shards
  // watch it with and its pushes carry (fencing).
  uint64_t epoch = 1;
  uint64_t store_epoch = 1; // the epoch the store's shards were spawned in
  // One more at every store heal: continuations of requests to the actors
  // it replaced drop out (guard), as do all once the run has ended.
  uint64_t generation = 0;
  bool ended = false;
  // Answers dropped because their actor was replaced since it was asked (a
  // report of a replaced replica, shards' answers from before a heal).
  uint64_t fenced_answers = 0;
  uint64_t fenced_answers_recorded = 0; // of those, the ones the epoch records counted
  std::vector<parked_respawn> parked; // respawns waiting for a join
  std::optional<parked_heal> waiting_heal; // a heal waiting for a join
  uint64_t last_park_id = 0;          // also numbers the retired actors' deadlines
  // The actors a heal stopped and what the heal does once they are down: it
  // spawns nothing before, so no spawn waits on a node that is dead but not
  // yet known so.
  std::vector<retired_actor> retired;
  std::function<void()> when_retired;
  uint64_t retired_deadline = 0; // the id of that wait's deadline

  /// Starts the next membership epoch and returns it.
  uint64_t next_epoch() { return ++epoch; }

  /// Starts the next generation: every continuation guarded before drops out.
  void replace_actors() { ++generation; }

  /// Ends the run's last generation: no guarded continuation runs after.
  void end() { ended = true; }

  /// Says whether a continuation begun in generation `made_in` still counts.
  bool current(uint64_t made_in) const { return !ended && generation == made_in; }

  /// Wraps `fn` so that it runs only while this generation lasts: no store
  /// heal replaced the actors it waits on and the run has not ended. The
  /// wrapper takes `fn`'s arguments, so CAF's then() accepts it.
  template <class F>
  generation_guard<F> guard(F fn) const {
    return {this, generation, std::move(fn)};
  }
};

/// Calls a continuation with its arguments only while the generation it was
/// made in is still the run's (run_membership::guard).
template <class F, class... Ts>
class generation_guard<F, caf::detail::type_list<Ts...>> {
public:
  generation_guard(const run_membership* members, uint64_t made_in, F fn)
    : members_(members), made_in_(made_in), fn_(std::move(fn)) {}

  void operator()(Ts... xs) {
    if (members_->current(made_in_))
      fn_(std::forward<Ts>(xs)...);
  }

private:
  const run_membership* members_; // the coordinator's state's, which outlives its requests
  uint64_t made_in_;
  F fn_;
};

} // namespace troupe::detail
