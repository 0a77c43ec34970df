// The coordinator's state and the phases of its fit loop (the diagram is in
// actors/run/coordinator.hpp). coordinator.cpp spawns the actors and calls
// start_epoch; these functions run the rest of the run.
#pragma once

#include <chrono>
#include <functional>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <caf/error.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>
#include <caf/typed_response_promise.hpp>

#include "actors/report/fit_observer.hpp"
#include "actors/replica/store_group.hpp"
#include "actors/report/trace_file.hpp"
#include "actors/run/placement.hpp"
#include "actors/run/run_plan.hpp"
#include "actors/store/variable_store.hpp"
#include "messages/interfaces.hpp"
#include "messages/protocol.hpp"
#include "model/backend/backend.hpp"
#include "model/data/dataset.hpp"
#include "model/metrics.hpp"
#include "model/model_description.hpp"

namespace troupe {

/// Holds what a run starts from; fit() builds it once, the state keeps it.
struct coordinator_setup {
  bool steered = false; // the caller hears each epoch and may stop the run
  run_plan plan;
  source_pair data;
  fit_observer observer;
  placement where;
  std::shared_ptr<trace_file> trace; // with --trace
  std::chrono::steady_clock::time_point run_start;
};

/// Holds a respawn under way: which replica, why, and since when; parked
/// (with an id) while it waits for a node to join (--respawn-timeout).
struct parked_respawn {
  size_t index = 0;
  std::string what;
  respawn_record record;
  std::chrono::steady_clock::time_point lost_at;
  uint64_t id = 0;
};

/// Holds the coordinator's run: its setup, the actors and the epoch under way.
struct coordinator_state {
  static inline const char* name = "troupe.coordinator";

  coordinator_setup setup;
  std::unique_ptr<model> evaluator; // scores the test set after each epoch
  store_group store;              // its shards
  std::vector<bool> shard_alive;  // by shard: no down message seen
  checkpoint_writer_actor writer; // with --checkpoint
  std::vector<replica_actor> replicas;
  std::vector<bool> alive;
  // Respawns (--on-replica-loss=respawn): by replica, whether one is under
  // way and how often it was lost in the round of its last loss; by replica
  // node, whether it is still taken for alive.
  std::vector<bool> respawning;
  std::vector<std::pair<uint64_t, uint32_t>> losses_in_round; // (round, losses) of the last one
  std::vector<bool> node_alive;
  uint32_t respawns = 0;
  // The membership epoch: one more at every respawn, move, join and heal;
  // each replica's actor belongs to the one it was spawned in, which the
  // shards watch it with and its pushes carry (fencing).
  uint64_t membership = 1;
  std::vector<uint64_t> replica_membership;
  uint64_t store_membership = 1; // the epoch the store's shards were spawned in
  // Answers dropped because their actor was replaced since it was asked (a
  // report of a replaced replica, shards' answers from before a heal).
  uint64_t fenced_answers = 0;
  uint64_t fenced_answers_recorded = 0; // of those, the ones the epoch records counted
  std::vector<parked_respawn> parked; // respawns waiting for a join
  uint64_t last_park_id = 0;
  uint64_t epoch_first_round = 0; // the store round this epoch started at
  bool training = false; // the epoch's orders are out and not every report is in
  bool epoch_recorded = true; // between epochs: the last one's record is out (or none began)
  // A healing store (heals_store): each heal bumps the generation, so the
  // continuations of requests to the actors it replaced drop out.
  uint64_t generation = 0;
  uint32_t heals = 0;
  std::pair<uint64_t, uint32_t> heals_from = {UINT64_MAX, 0}; // (snapshot round, heals from it)
  uint64_t samples_before_heal = 0; // this epoch's, up to the snapshot a heal rolled back to
  uint64_t pushes_before_heal = 0;  // the same for pushes
  // The actors a heal stopped, until their down messages come (which tell
  // whose node is gone), and what the heal does then: it spawns nothing
  // before, so no spawn waits on a node that is dead but not yet known so.
  struct retired_actor {
    caf::actor_addr address;
    size_t store_node;   // or placement::here
    size_t replica_node; // or placement::here
  };
  std::vector<retired_actor> retired;
  std::function<void()> when_retired;
  uint64_t retired_deadline = 0; // the id of that wait's deadline
  std::vector<bool> reported; // this epoch
  std::vector<replica_report> reports;
  std::vector<replica_report> totals; // each replica's reports summed over the run
  std::vector<std::vector<trace_span>> shard_spans; // --trace: polled, not yet written
  uint32_t epoch = 0;
  std::chrono::steady_clock::time_point epoch_start;
  store_stats last_stats;
  checkpoint_stats last_checkpoint_stats;
  double train_seconds = 0;
  uint64_t train_samples = 0;
  epoch_record last_record;
  caf::typed_response_promise<fit_summary> promise;
  bool done = false;
  caf::actor caller;              // fit()'s own actor, which steers after each epoch
  bool awaiting_verdict = false;  // an epoch's record is with the caller
  bool stop_requested = false;    // a callback or the caller ended the run after an epoch
  float learning_rate_factor = 1.0f; // the schedule's rate is times this (callbacks, resume)
  std::vector<metric_spec> metrics;  // --extra-metrics, scored with the test set
  bool stop_graceful = false;     // the caller asked to stop (stop_atom): it ends as stopped
  // A failed run's last question to each live shard (fail_run): which are
  // still to answer, and what settles one (its answer or its down message).
  std::vector<bool> flush_pending;
  std::function<void(size_t)> shard_flushed;
};

using coordinator_pointer = coordinator_actor::stateful_pointer<coordinator_state>;

/// Says whether a continuation begun at `generation` still counts: the run
/// goes on and no store heal has replaced its actors since.
inline bool still_current(const coordinator_state& st, uint64_t generation) {
  return !st.done && st.generation == generation;
}

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
/// (st.fenced_answers).
bool counts_as_report(coordinator_state& st, size_t i, const caf::actor_addr& ordered,
                      const replica_report& report);

/// Orders replica `index` (the actor st.replicas holds now) to train
/// `order`'s epoch from its start round, and collects its report.
void order_epoch(coordinator_pointer self, size_t index, const epoch_order& order);

/// Passes a warning to the observer, if it listens.
void warn(const coordinator_state& st, const std::string& text);

/// Marks a moment of the run in the trace (with --trace).
void trace_instant(coordinator_state& st, const std::string& name);

/// Ends the run with `err` (once) and sends every actor an exit.
void fail_run(coordinator_pointer self, caf::error err);

} // namespace troupe
