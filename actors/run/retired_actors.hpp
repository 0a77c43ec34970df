// The actors a store heal stops: their exits, and the wait for their down
// messages, which tell whose node is gone, before the heal spawns anything.
#pragma once

#include <cstdint>
#include <functional>

#include <caf/fwd.hpp>

#include "actors/run/epoch_phases.hpp"

namespace troupe::detail {

/// Stops every replica and shard. The coordinator forgets their handles, so
/// their late answers match no actor it holds, and awaits their down messages
/// (monitored again: one that is down already, as a lost replica whose
/// respawn waits for a join, reports it once more).
void stop_run_actors(coordinator_pointer self);

/// Calls `then` once every actor stop_run_actors stopped is down, or after a
/// step timeout (a frozen node without heartbeats is never reported).
void await_retired(coordinator_pointer self, std::function<void()> then);

/// Takes the down message of an actor a heal stopped (false: another
/// actor's); once every one is in, the heal goes on.
bool retired_down(coordinator_pointer self, const caf::down_msg& msg);

/// Lets a heal go on when deadline `id` is its wait for the stopped actors'
/// down messages (false: another deadline).
bool retired_deadline(coordinator_pointer self, uint64_t id);

} // namespace troupe::detail
