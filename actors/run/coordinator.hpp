// The coordinator: the fit loop. It spawns the store and the replicas, runs the
// epochs, evaluates on the test set after each one and shuts everything down.
//
// Its phases, one small function each (actors/run/epoch_phases.cpp):
//
//   fit_atom: spawn the store and the replicas
//        |
//        v
//   start_epoch -- every epoch done --> finish_run: final parameters,
//        |  ^                           summary to the caller, exits
//        |  |
//        |  +-------------------------------------------+
//        v                                              |
//   (replicas train; each live one reports:             |
//    order_epoch, replica_orders.cpp)                   |
//        | the last live replica reports                |
//        v                                              |
//   collect_epoch_stats: the store's stats -> record,   |
//        |   unwritten checkpoints -> on_warning        |
//        v                                              |
//   evaluate_epoch: test set -> observer.on_epoch       |
//        v                                              |
//   steer_epoch: the caller's callbacks (fit steered)   |
//        v                                              |
//   checkpoint_if_due: with --checkpoint, save ---------+
//
//   Beside the loop: an error in any phase, the store's death (store_lost),
//   or a replica's (replica_lost) under --on-replica-loss=abort or with none
//   left -> fail_run (run_end.cpp): the error to the caller, exits. A
//   replica's death under continue -> observer.on_warning; the epoch ends
//   once the survivors report. Under respawn -> respawn.cpp: a new actor in
//   its slot, ordered from the open round. A shard's death with a healing
//   store -> store_heal.cpp: stop every actor (retired_actors.cpp), respawn
//   the shards (shard_respawn.cpp) and the replicas from the newest
//   snapshot. A node that joins -> join.cpp: replicas move onto it.
//
// Its state (coordinator_state.hpp): a replica_slot per replica and a
// shard_slot per shard (run_slots.hpp), one node_table for the nodes.
#pragma once

#include <memory>

#include <caf/expected.hpp>
#include <caf/fwd.hpp>

#include "actors/config/run_config.hpp"
#include "actors/report/fit_observer.hpp"
#include "messages/protocol.hpp"
#include "model/data/dataset.hpp"

namespace troupe::detail {

/// Runs a fit to the end and returns its summary, or the error that stopped
/// it. Every wait inside is bounded; nothing is left running afterwards.
/// `config` was checked against `data` (check_run_config): it is not checked
/// again.
caf::expected<fit_summary> run_training(caf::actor_system& system,
                                        const checked_run_config& config, source_pair data,
                                        fit_observer observer = {});

/// Checks `config` against `data`, then runs it.
caf::expected<fit_summary> run_training(caf::actor_system& system, const run_config& config,
                                        source_pair data, fit_observer observer = {});

/// Runs a fit on data held in memory.
caf::expected<fit_summary> run_training(caf::actor_system& system, const run_config& config,
                                        std::shared_ptr<const dataset_pair> data,
                                        fit_observer observer = {});

} // namespace troupe::detail
