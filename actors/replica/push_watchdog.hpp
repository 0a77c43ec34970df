// The watchdog of a replica's push. No request timeout per push: each
// would wake CAF's clock thread twice. Instead one tick stays on its way
// while the replica waits for answers, every quarter step timeout, so a
// push unanswered for a step timeout fails within 1.25 step timeouts.
#pragma once

#include "actors/replica/replica_state.hpp"

namespace troupe::detail {

/// Sends the replica its next tick unless one is on its way.
void arm_watchdog(replica_pointer self);

/// Takes a tick: fails the push waited for once it is a step timeout old
/// (its error names the replica and round), else arms the next tick.
void check_watchdog(replica_pointer self);

} // namespace troupe::detail
