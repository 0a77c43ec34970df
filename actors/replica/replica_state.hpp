// What a replica actor keeps between messages, and the behaviour built from
// it: the training loop (replica.cpp) and the ways it is spawned
// (replica_spawn.cpp) share them.
//
//   idle --epoch order--> computing --push--> waiting --every shard answered--> computing
//   computing --no round left: the report--> idle
//   waiting --a push failed, or no answer within a step timeout: the error--> idle
//   any --a store shard is gone--> ended
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <caf/typed_response_promise.hpp>

#include "actors/replica/replica_setup.hpp"
#include "actors/replica/share_compute.hpp"
#include "actors/replica/store_group.hpp"
#include "messages/interfaces.hpp"
#include "messages/protocol.hpp"
#include "model/data/epoch_schedule.hpp"

namespace troupe::detail {

/// Holds a replica's state: its setup, the parameters it computes at, its
/// place in the epoch and the push it waits for.
struct replica_state {
  static inline const char* name = "troupe.replica";
  using clock_type = std::chrono::steady_clock;

  std::shared_ptr<replica_setup> setup;
  std::unique_ptr<share_compute> compute;
  params_msg params;
  // Where the shards' slices of the parameters are joined when they are not
  // views of one buffer already (shards in other processes, async shards).
  std::shared_ptr<std::vector<float>> joined;
  // Some shard lives in another process: each answer is copied into
  // `joined` as it comes, while the others are still on their way.
  bool joins_as_answers_come = false;
  // What each shard's slice of `joined` holds, which the shard may code its
  // next answer against (wire_codings.hpp); and an answer this round that
  // could not be joined.
  std::vector<std::optional<slice_version>> joined_versions;
  std::string join_fault;
  // With device hand-over: the shards' last answers (views of their device
  // buffers), held until the next push: the replica's reads of them have
  // finished by then (it waits for its step's loss), and a shard steps in
  // place only once none holds them.
  std::vector<params_msg> device_parts;
  std::vector<uint32_t> order;                  // this epoch's permutation
  std::unique_ptr<epoch_schedule> schedule;
  size_t losses_applied = 0;                    // entries of params.losses seen
  std::vector<uint32_t> batch_indices;
  size_t next_round = 0;                        // position in this epoch
  uint64_t first_round = 0;                     // the store's round at epoch start
  uint64_t pushes = 0;                          // over the replica's life
  bool waiting = false;                         // for the answers to push `pushes`
  // The push out: which shards' slices have left (none yet: empty) and
  // each shard's answer as it comes.
  struct push_out {
    std::vector<bool> sent;
    std::vector<params_msg> answers;
    size_t missing = 0;
  };
  push_out out;
  bool residual_due = false; // an answer cut (params_msg::cut): the next push carries the residual
  bool watchdog_armed = false;                  // a tick is on its way
  replica_report report;
  caf::typed_response_promise<replica_report> promise;
  clock_type::time_point pushed_at;
};

using replica_pointer = replica_actor::stateful_pointer<replica_state>;

/// Runs the replica's next round of its epoch, or answers the epoch order
/// with its report when none is left.
void run_round(replica_pointer self);

/// Returns the behaviour of a replica that trains with `setup`.
replica_actor::behavior_type replica_behavior(replica_pointer self,
                                              std::shared_ptr<replica_setup> setup);

} // namespace troupe::detail
