// The coordinator's state: what the run started from, a slot per replica,
// shard and node, the membership and the epoch under way.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <caf/actor.hpp>
#include <caf/actor_addr.hpp>
#include <caf/typed_response_promise.hpp>

#include "actors/report/fit_observer.hpp"
#include "actors/report/trace_file.hpp"
#include "actors/run/membership.hpp"
#include "actors/run/node_table.hpp"
#include "actors/run/placement.hpp"
#include "actors/run/run_plan.hpp"
#include "actors/run/run_slots.hpp"
#include "messages/interfaces.hpp"
#include "messages/protocol.hpp"
#include "model/data/dataset.hpp"
#include "model/metrics.hpp"
#include "model/model_description.hpp"

namespace troupe::detail {

/// Holds what a run starts from; fit() builds it once, the state keeps it.
struct coordinator_setup {
  bool steered = false; // the caller hears each epoch and may stop the run
  run_plan plan;
  source_pair data;
  fit_observer observer;
  placement where;   // the spawners
  run_layout layout; // the nodes and the starting places, moved into the state's slots
  std::shared_ptr<trace_file> trace; // with --trace
  std::chrono::steady_clock::time_point run_start;
};

/// Holds the coordinator's run: its setup, the actors and the epoch under way.
struct coordinator_state {
  static inline const char* name = "troupe.coordinator";

  coordinator_setup setup;
  std::unique_ptr<model> evaluator; // scores the test set after each epoch
  std::vector<replica_slot> replicas;
  std::vector<shard_slot> shards; // the store, in shard order
  node_table nodes;
  checkpoint_writer_actor writer; // with --checkpoint
  uint32_t respawns = 0;
  run_membership members;
  uint64_t epoch_first_round = 0; // the store round this epoch started at
  bool training = false; // the epoch's orders are out and not every report is in
  bool epoch_recorded = true; // between epochs: the last one's record is out (or none began)
  uint32_t heals = 0; // of a healing store (heals_store)
  std::pair<uint64_t, uint32_t> heals_from = {UINT64_MAX, 0}; // (snapshot round, heals from it)
  uint64_t samples_before_heal = 0; // this epoch's, up to the snapshot a heal rolled back to
  uint64_t pushes_before_heal = 0;  // the same for pushes
  // --wire=int8: every replica's residual, replica after replica, that the
  // next epoch orders hand out (a resumed run's, or the snapshot a heal
  // rolled back to); empty: each replica keeps its own.
  std::vector<float> carried_residuals;
  uint32_t epoch = 0;
  std::chrono::steady_clock::time_point epoch_start;
  store_stats last_stats;
  checkpoint_stats last_checkpoint_stats;
  double train_seconds = 0;
  uint64_t train_samples = 0;
  epoch_record last_record;
  caf::typed_response_promise<fit_summary> promise;
  bool done = false; // with members.end(), which stops the guarded continuations
  caf::actor caller;              // fit()'s own actor, which steers after each epoch
  bool awaiting_verdict = false;  // an epoch's record is with the caller
  bool healing = false;           // a store heal's actors are stopped and not yet all back
  std::function<void()> after_heal; // the caller's verdict, which came while healing
  bool stop_requested = false;    // a callback or the caller ended the run after an epoch
  float learning_rate_factor = 1.0f; // the schedule's rate is times this (callbacks, resume)
  std::vector<metric_spec> metrics;  // --extra-metrics, scored with the test set
  bool stop_graceful = false;     // the caller asked to stop (stop_atom): it ends as stopped
  // What settles a failed run's last question to a shard (fail_run): its
  // answer or its down message (shard_slot::flush_pending says which wait).
  std::function<void(size_t)> shard_flushed;
};

/// Returns the shards' actors in shard order, as replicas are given them.
std::vector<store_actor> shard_actors(const coordinator_state& st);

} // namespace troupe::detail
