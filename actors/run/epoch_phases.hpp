// The phases of the coordinator's fit loop (the diagram is in
// actors/run/coordinator.hpp). coordinator.cpp spawns the actors and calls
// start_epoch; these functions run the rest of the run.
#pragma once

#include <chrono>
#include <functional>
#include <cstdint>
#include <string>
#include <vector>

#include <caf/error.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include "actors/run/coordinator_state.hpp"
#include "messages/interfaces.hpp"
#include "messages/protocol.hpp"

namespace troupe::detail {

using coordinator_pointer = coordinator_actor::stateful_pointer<coordinator_state>;

/// Bounds one request of the coordinator: the run's step timeout.
std::chrono::milliseconds step_timeout(const coordinator_state& st);

/// Starts epoch `st.epoch` on every live replica, or finishes the run when
/// every epoch is done.
void start_epoch(coordinator_pointer self);

/// Asks every shard for its part of a checkpoint of the store's state now
/// and calls `then` with all of them, unless a store heal replaced the
/// shards meanwhile; an error fails the run.
void gather_store_parts(coordinator_pointer self,
                        std::function<void(std::vector<checkpoint_part>&)> then);

/// Tells every store shard the store's shards in shard order, which they
/// exchange their gradients' sums of squares with to clip by global norm
/// (--global-clipnorm under a policy with rounds, several shards); nothing
/// otherwise. Called once the shards are spawned, before any replica is
/// ordered to train: after the start and after a store heal.
void introduce_shards(coordinator_pointer self);

/// Goes on between epochs after a store heal: from the epoch's stats, or
/// once its record is out from its checkpoint.
void resume_after_heal(coordinator_pointer self);

/// Reports the progress of epoch `epoch` (1-based) to the observer, if it is
/// still under way, and sets the timer for the next report.
void report_progress(coordinator_pointer self, uint32_t epoch);

/// Marks replica `index` lost: fails the run (abort, or none left), respawns
/// it, or warns through the observer and lets the epoch end over the
/// survivors. `node_lost`: the connection to its node is gone.
void lose_replica(coordinator_pointer self, size_t index, const std::string& reason,
                  bool node_lost = false);

/// Says whether replica `i`'s report, answering the order sent to the actor
/// `ordered`, counts: that actor is still the replica's, of the membership
/// epoch the coordinator knows it by, and has not reported this epoch. Any
/// other is a late report of a replaced actor: dropped and counted
/// (st.members.fenced_answers).
bool counts_as_report(coordinator_state& st, size_t i, const caf::actor_addr& ordered,
                      const replica_report& report);

/// Orders replica `index` (the actor its slot holds now) to train
/// `order`'s epoch from its start round, and collects its report.
void order_epoch(coordinator_pointer self, size_t index, const epoch_order& order);

/// Passes a warning to the observer, if it listens.
void warn(const coordinator_state& st, const std::string& text);

/// Marks a moment of the run in the trace (with --trace).
void trace_instant(coordinator_state& st, const std::string& name);

/// The replicas' int8 residuals at this epoch's end, replica after replica;
/// none unless every replica reported one.
std::vector<float> epoch_residuals(const coordinator_state& st);

/// Replica `replica`'s slice of st.carried_residuals, or none.
shared_floats carried_residual(const coordinator_state& st, size_t replica);

/// Moves on once every live replica has reported this epoch.
void collect_if_epoch_complete(coordinator_pointer self);

/// Sends every actor an exit and stops the coordinator.
void shutdown_run(coordinator_pointer self);

/// Ends the run with `err` (once) and sends every actor an exit.
void fail_run(coordinator_pointer self, caf::error err);

} // namespace troupe::detail
