// What a running fit tells its caller: each epoch's record, and warnings about
// problems the run survives (a lost replica, a checkpoint not written).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <caf/allowed_unsafe_message_type.hpp>

#include "messages/coded_traffic.hpp"

namespace troupe::detail {

/// Sums one epoch for progress lines and metrics.
struct epoch_record {
  uint32_t epoch = 0; // 1-based, as Keras prints it
  double train_loss = 0;
  double train_accuracy = 0;
  double test_loss = 0;
  double test_accuracy = 0;
  uint64_t samples = 0;
  double seconds = 0;            // the training loop only
  double samples_per_second = 0;
  double staleness_mean = 0;
  uint64_t staleness_max = 0;
  bool staleness_reported = false; // the policy reports staleness (async): print it
  uint64_t dropped = 0;            // late gradients dropped this epoch (backup replicas)
  std::vector<uint64_t> staleness_histogram; // this epoch's gradients by staleness (store_stats)
  double compute_seconds = 0;    // summed over replicas
  double wait_seconds = 0;       // summed over replicas: push to answer
  double apply_seconds = 0;      // in the store: reduce + optimizer + publish
  uint64_t pushes = 0;
  uint64_t version = 0;
  uint32_t live_replicas = 0;
  uint32_t live_nodes = 0; // replica nodes still taken for alive (joined ones too); 0: a local run
  uint32_t respawns = 0;   // of the run so far: replicas respawned or moved
  uint64_t fenced = 0;     // pushes refused this epoch from replaced actors (over all shards)
  uint64_t fenced_answers = 0; // answers of replaced actors the coordinator dropped this epoch
  uint64_t membership = 1; // the membership epoch at the epoch's end
  double learning_rate = 0; // the rate of the epoch's last step (schedule and callbacks)
  // What the wire's lossless codings did, over every replica (messages/coded_traffic.hpp).
  coded_traffic coded{};
  // --extra-metrics on the test (validation) set, by name ("top_5_accuracy"), in order.
  std::vector<std::pair<std::string, double>> test_metrics;
};

/// Says how far the epoch under way is, as store shard 0 counts it.
struct epoch_progress {
  uint32_t epoch = 0;          // 1-based
  uint32_t epochs = 0;
  uint64_t samples = 0;        // trained in this epoch so far
  uint64_t epoch_samples = 0;  // in the whole epoch
  uint64_t rounds = 0;         // of the epoch (batch_plan), for a Keras-style step count
  double seconds = 0;          // since the epoch started
  double train_loss = 0;       // mean over this epoch's samples so far
  uint64_t version = 0;        // optimizer steps of the run so far
  uint64_t run_samples = 0;    // samples trained since the run started
  double run_seconds = 0;      // wall time since the run started
};

/// Says what a replacement was.
enum class replacement_kind {
  respawn,    // a lost replica's new actor (--on-replica-loss=respawn)
  move,       // a replica moved onto a node that joined
  store_heal, // a lost store shard: the run rolled back to a snapshot, the
              // shards and every replica started again from it
};

/// Records one replacement of an actor of the run.
struct replacement_record {
  replacement_kind kind = replacement_kind::respawn;
  uint32_t index = 0;         // the replica (respawn, move) or the lost shard (store_heal)
  uint32_t epoch = 0;         // 1-based
  uint64_t round = 0;         // the store round the new actors start at
  std::string lost_on;        // where the lost one ran ("node H:P (cpu)", "cpu")
  std::string respawned_on;   // where the new one runs
  std::string reason;         // why the lost one ended; for a move, which node joined
  double milliseconds = 0;    // from the news of the loss (or the move) to the new orders
  double noticed_at = 0;      // when that news came: seconds since the Unix epoch
  uint64_t membership = 0;    // the membership epoch the new actors belong to
};

/// Records the end of one recovery (a respawn after a loss, or a store
/// heal): the round it restarted from has closed on every shard, so the run
/// trains on. Runs with rounds only (sync, delayed).
struct recovery_record {
  std::string after;          // "respawn" or "store_heal"
  uint64_t round = 0;         // the store round it restarted from, now closed
  uint64_t membership = 0;    // the membership epoch the recovery began
  double closed_ms = 0;       // from the news of the loss to that round's close
  double closed_at = 0;       // when it closed: seconds since the Unix epoch
};

/// Receives each epoch's record as soon as it is known.
using epoch_observer = std::function<void(const epoch_record&)>;

/// Receives a warning as a sentence without a "warning: " prefix, e.g.
/// "replica 1 on cpu died in epoch 2: ...; continuing with 1 replicas".
using warning_observer = std::function<void(const std::string&)>;

/// Receives the epoch's progress every progress_interval while it runs.
using progress_observer = std::function<void(const epoch_progress&)>;

/// Receives each replacement (respawn, move or store heal) once the new
/// actors have their orders.
using replacement_observer = std::function<void(const replacement_record&)>;

/// Receives each recovery once the round it restarted from has closed.
using recovery_observer = std::function<void(const recovery_record&)>;

/// What the caller's callbacks decide after an epoch: whether the run ends
/// there, and by what factor the learning rate changes for the epochs after.
struct epoch_verdict {
  bool stop = false;
  float learning_rate_factor = 1.0f;
};

/// Hears each epoch's record with the parameters the epoch left, on the
/// thread that called fit(), and decides whether the run goes on; whatever
/// it throws ends the run with the exception's message.
using epoch_steering =
  std::function<epoch_verdict(const epoch_record&, const std::vector<float>& params)>;

/// Hears a fit while it runs. Any member may be empty; all but on_epoch_end
/// are called on the coordinator's thread, one call at a time. The library
/// prints nothing: a program shows what it hears (examples/mnist.cpp prints
/// warnings to stderr).
struct fit_observer {
  // On the thread that called fit(), after on_epoch; the coordinator waits
  // for its verdict before the epoch's checkpoint and the next epoch.
  epoch_steering on_epoch_end;
  // Polled on the thread that called fit() about every 100 ms: true asks
  // the run for a graceful stop (graceful_stop.hpp).
  std::function<bool()> stop_asked;
  epoch_observer on_epoch;
  warning_observer on_warning;
  // With on_progress set, the coordinator asks store shard 0 for its counters
  // once per interval (one small request, never one message per step).
  progress_observer on_progress;
  std::chrono::milliseconds progress_interval{100};
  replacement_observer on_replacement;
  recovery_observer on_recovery;
};

} // namespace troupe::detail

// An epoch's record goes from the coordinator to fit()'s own actor, in one
// process only.
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::detail::epoch_record)
