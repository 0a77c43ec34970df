// How a store shard takes a push (its checks, then its policy's call), and
// the halt of a graceful stop: pushes from a round on wait, and the shard's
// checkpoint part comes once every round before it has closed.
#pragma once

#include <cstdint>

#include <caf/result.hpp>

#include "actors/store/store_state.hpp"
#include "messages/interfaces.hpp"

namespace troupe::detail {

using store_pointer = store_actor::stateful_pointer<store_state>;

/// Takes a push from the replica that sent the current message; the answer
/// comes when the policy answers it (at once, or when its round closes). A
/// halted shard keeps a push of a round from the halt on, unanswered.
caf::result<params_msg> take_push(store_pointer self, push_msg& push);

/// Sends the writer this shard's part of a checkpoint or a snapshot that a
/// round closing in it made due; called after each call into the policy.
void send_due_part(store_pointer self);

/// Takes the pushes a graceful stop held of rounds before its halt, unless a
/// clipped step waits for its norm (they wait on).
void release_held(store_pointer self);

/// Does what waited for the clipped steps that waited for their norms: the
/// held pushes, a due checkpoint part or snapshot, a halted shard's part.
void after_clipped_steps(store_pointer self);

/// Halts the shard at the round it collects now: its pushes from that round
/// on wait. Answers that round (next_round) and the shard's membership.
store_stats halt_shard(store_pointer self);

/// Moves the halt to round `until`: the pushes of earlier rounds that
/// waited go to the policy, and the shard's checkpoint part comes once it
/// has closed every round before `until`.
caf::result<checkpoint_part> halt_shard_at(store_pointer self, uint64_t until);

} // namespace troupe::detail
