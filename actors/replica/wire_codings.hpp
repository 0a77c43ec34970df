// A replica's side of the wire's lossless codings (messages/coded_traffic.hpp):
// pushes with their zeros as a mask, which shards it asks for coded answers,
// and joining each answer into its join buffer.
#pragma once

#include <cstddef>

#include "actors/replica/replica_state.hpp"

namespace troupe::detail {

/// Before a push's answers come: makes the join buffer writable (a new one
/// starts as a copy of the old, so what each slice holds stays true) and
/// clears the last round's fault.
void prepare_join(replica_state& st);

/// Says whether the replica reaches shard `k` through the network: in
/// another process, not through a lane of this host.
bool reached_through_network(replica_pointer self, size_t k);

/// Marks `slice`'s gradient to travel with its zeros as a mask, for a shard
/// reached through the network where that is smaller, and counts it in the
/// report; unless the run pushes whole or in int8.
void mask_push_zeros(replica_pointer self, size_t k, push_msg& slice);

/// Asks shard `k` to code its answer to `slice` against what the join
/// buffer holds of its slice: for a shard reached through the network (not
/// one of this process, or of a lane), unless the run sends answers whole.
void ask_delta(replica_pointer self, size_t k, push_msg& slice);

/// Joins shard `k`'s answer into the join buffer and counts a delta in the
/// report; what was wrong stays in st.join_fault for the round's end.
void join_shard_answer(replica_state& st, size_t k, const params_msg& part);

} // namespace troupe::detail
