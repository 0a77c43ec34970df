// A healing store (heals_store: the store on nodes or --wire=int8 on nodes, under
// --on-replica-loss=respawn): a shard's death (or, with int8 under sync, a
// replica's) rolls the run back to the newest snapshot the checkpoint writer
// keeps in this process, respawns the lost shard on a live store node and
// every replica after it, and the replicas recompute the rounds since, so
// the bits do not change.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "actors/run/epoch_phases.hpp"

namespace troupe::detail {

/// Handles the death of store shard `shard` (`why`; `node_lost`: its node's
/// connection is gone). A run that heals its store stops every replica and
/// shard, starts the shards again from the newest snapshot (the lost one on
/// a live store node, or here with --respawn=anywhere once none is left),
/// respawns every replica, and orders them from the snapshot's round, or
/// goes on between epochs when the snapshot is of the epoch's end. Otherwise,
/// or when nothing can host the shard, the run ends naming it.
void lose_shard(coordinator_pointer self, size_t shard, const std::string& why, bool node_lost);

/// Whether a lost replica rolls the run back to the newest snapshot rather
/// than respawning alone: --wire=int8 under sync with a store that heals.
/// Its error-feedback residual died with it, and the snapshot keeps every
/// replica's (a snapshot cut mid-epoch gets them from the pushes after it).
bool rolls_back_replicas(const coordinator_state& st);

/// Handles the loss of replica `index` when rolls_back_replicas: as a
/// shard's loss (lose_shard), every shard and replica starts again from the
/// newest snapshot, the lost replica on a live node; recorded as a respawn.
void roll_back_for_replica(coordinator_pointer self, size_t index, const std::string& what,
                           const std::string& reason, bool node_lost);

/// A heal whose replicas found no place and waits for a join
/// (--respawn-timeout, --accept-joins) goes on with `node`, which just
/// joined; false when no heal waits.
bool resume_parked_heal(coordinator_pointer self, size_t node);

/// The deadline `id` of a heal waiting for a join ran out: the run fails;
/// false when `id` is no such deadline.
bool parked_heal_deadline(coordinator_pointer self, uint64_t id);

/// With a store that heals: sends every shard's part of the store's state
/// now (the run's start, an epoch's end) to the writer to keep as a
/// snapshot, with the replicas' int8 `residuals` (replica after replica;
/// may be empty), then calls `then`. A heal between epochs starts from the
/// end's and never rolls back into an epoch whose record is out.
void snapshot_store(coordinator_pointer self, const std::vector<float>& residuals,
                    std::function<void()> then);

} // namespace troupe::detail
