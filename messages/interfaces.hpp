// The typed interfaces of Troupe's actors: the contracts CAF checks at compile
// time, and at connect time across the network.
#pragma once

#include <vector>

#include <caf/actor.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include "messages/atoms.hpp"
#include "messages/protocol.hpp"

namespace troupe::detail {

/// A replica trains one epoch per order and reports what it did.
using replica_actor = caf::typed_actor<
  caf::replies_to<epoch_atom, epoch_order>::with<replica_report>,
  // Answers its index once set up, or why it could not be (a remote replica
  // whose node cannot open its device, data or model).
  caf::replies_to<ready_atom>::with<uint32_t>,
  // --wire=int8: its error-feedback residual from before its push of store
  // round R (a graceful stop's checkpoint of round R).
  caf::replies_to<residual_atom, uint64_t>::with<shared_floats>,
  // Hands its residual over and ends (a move): the store round of its last
  // push (UINT64_MAX: none), its residual from before that push, and now.
  caf::replies_to<residual_atom>::with<uint64_t, shared_floats, shared_floats>,
  // Its own timer: is its push still unanswered after a step timeout? (One
  // timer per quarter timeout while it waits, not one per push.)
  caf::reacts_to<tick_atom>>;

/// Assembles checkpoint files from the store shards' parts and writes them.
using checkpoint_writer_actor = caf::typed_actor<
  // A shard's part of a periodic checkpoint (--checkpoint-every); the file is
  // written once every shard's part of that round is in.
  caf::reacts_to<part_atom, checkpoint_part>,
  // Write a checkpoint of these parts, one per shard, now; answers the bytes written.
  caf::replies_to<save_atom, std::vector<checkpoint_part>>::with<uint64_t>,
  // A shard's part of a snapshot (--snapshot-every), kept in memory once
  // every shard's part of that round is in; or every shard's at once.
  caf::reacts_to<snapshot_atom, checkpoint_part>,
  caf::reacts_to<snapshot_atom, std::vector<checkpoint_part>>,
  // The newest complete snapshot, one part per shard: what a store heals from.
  caf::replies_to<restore_atom>::with<std::vector<checkpoint_part>>,
  caf::replies_to<stats_atom>::with<checkpoint_stats>>;

/// One shard of the variable store: owns its range of the parameters and its
/// optimizer state, answers pushes of its gradient slice according to its
/// update policy, watches replicas so none leaves a round waiting.
using store_actor = caf::typed_actor<
  caf::replies_to<push_atom, push_msg>::with<params_msg>,
  caf::replies_to<params_atom>::with<params_msg>,
  // The parameters at this version: the current one, or the one before
  // while the shard still holds it (a respawn recomputing a round that
  // closed on this shard only).
  caf::replies_to<params_atom, uint64_t>::with<params_msg>,
  caf::replies_to<stats_atom>::with<store_stats>,
  // Watches this actor as replica `index` of membership epoch M (a second
  // one replaces the first, and only pushes of M count as that replica's)
  // and answers the round after the last push of that replica the shard
  // took, under a policy whose respawns go on from there (else 0).
  caf::replies_to<watch_atom, uint32_t, replica_actor, uint64_t>::with<uint64_t>,
  // Opens a lane from the sender's process to this shard's on one host
  // (actors/cluster/host_lanes.hpp): (the sender's host key, the name of the
  // ring the sender reads, its capacity in bytes); answers the name of the
  // ring this process reads, or an error where there are no lanes.
  caf::replies_to<lane_atom, std::string, std::string, uint64_t>::with<std::string>,
  // Answers the shard's next round once store round R has closed in it
  // (at once if it has): when a recovery that restarted from R is over.
  caf::replies_to<await_atom, uint64_t>::with<uint64_t>,
  // A graceful stop: halt at the round the shard collects now (its pushes
  // from there on wait) and answer it as next_round; then move the halt to
  // round R and answer the shard's checkpoint part once every round before
  // R has closed in it.
  caf::replies_to<halt_atom>::with<store_stats>,
  caf::replies_to<halt_atom, uint64_t>::with<checkpoint_part>,
  // Steps from now on with the schedule's learning rate times this factor
  // (a callback's reduction between epochs); answers true.
  caf::replies_to<rate_atom, float>::with<bool>,
  // An epoch starts: (epoch, the store round of its first round), for checkpoints.
  caf::reacts_to<epoch_atom, uint64_t, uint64_t>,
  // Answers this shard's part of a checkpoint of the epoch just completed.
  caf::replies_to<save_atom>::with<checkpoint_part>,
  // Every shard of the store, in shard order (this one included), which
  // clipping by global norm exchanges its sums of squares with; sent after
  // the shards are spawned, and again after a store heal.
  caf::reacts_to<peers_atom, std::vector<caf::actor>>,
  // A sibling shard's sum of squares of its slice of a round's gradient.
  caf::reacts_to<norm_atom, norm_msg>>;

/// A node's front door: the handshake that must pass before the coordinator
/// spawns replicas there (through CAF's remote spawn, type "troupe.replica").
using node_actor = caf::typed_actor<
  caf::replies_to<hello_atom, handshake>::with<handshake>,
  // Connect this node directly to another one (the --store-node), so that
  // replicas here reach the store without a detour through the coordinator.
  caf::replies_to<link_atom, std::string, uint16_t>::with<bool>,
  // Take node N, which the coordinator linked to this node from its side,
  // as greeted: the one connection serves both directions.
  caf::replies_to<link_atom, caf::node_id>::with<bool>,
  // Its steady clock now (trace clock offsets: the coordinator keeps the
  // estimate of the quickest of a few round trips).
  caf::replies_to<clock_atom>::with<int64_t>>;

/// What a coordinator listening for joins (--accept-joins) publishes: a node
/// announces the host and port it listens on, and the coordinator connects
/// to it as to any node (handshake included), then moves replicas there.
/// The answer says what the node hosts.
using join_door_actor =
  caf::typed_actor<caf::replies_to<join_atom, std::string, uint16_t>::with<std::string>>;

/// The coordinator runs a whole fit and answers with its summary.
using coordinator_actor = caf::typed_actor<
  caf::replies_to<fit_atom>::with<fit_summary>,
  // A node asks to join the run (through the join door).
  caf::replies_to<join_atom, std::string, uint16_t>::with<std::string>,
  // Its own timer: the respawn parked as this id waited --respawn-timeout.
  caf::reacts_to<deadline_atom, uint64_t>,
  // Its own timer: time to report the progress of this epoch (1-based).
  caf::reacts_to<tick_atom, uint32_t>,
  // The caller asks for a graceful stop: the open round closes, the
  // checkpoint is written (with --checkpoint), and the run ends as stopped.
  caf::reacts_to<stop_atom>>;

} // namespace troupe::detail
