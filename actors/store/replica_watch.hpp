// How a store shard keeps track of the actors it depends on: it watches its
// replicas (a death goes to the policy), its siblings (clipping by global
// norm) and its coordinator, and answers who awaits a round's close.
#pragma once

#include <cstdint>

#include <caf/make_message.hpp> // before caf/result.hpp: a result<T> of a value needs it

#include "actors/store/push_intake.hpp"

namespace troupe::detail {

/// Handles a down message: a replica's death goes to the policy (which
/// closes rounds without it, or stops), a sibling's to norm_exchange, and the
/// coordinator's (`owner`) ends the shard: nobody is left to ask for its work.
void on_down(store_pointer self, const caf::actor_addr& owner, caf::down_msg& msg);

/// Watches `replica` as replica `index` of membership epoch `membership`
/// and answers the round it pushes next (see store_actor).
caf::result<uint64_t> watch_replica(store_pointer self, uint32_t index, replica_actor& replica,
                                    uint64_t membership);

/// Answers the shard's next round once round `round` has closed in it.
caf::result<uint64_t> await_round(store_pointer self, uint64_t round);

} // namespace troupe::detail
