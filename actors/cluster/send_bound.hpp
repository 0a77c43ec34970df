// A bound on how long data sent over TCP may stay unacknowledged. CAF's
// middleman drains a connection's pending writes before it lets the
// connection go, and stops only once every connection is gone: a link cut
// with data in flight would hold a process at exit until the kernel gave up
// retransmitting (about 15 minutes).
#pragma once

#include <chrono>

#include <caf/fwd.hpp>

namespace troupe::detail {

/// Returns the bound for `system`: two middleman connection timeouts, at
/// least two seconds. A peer whose acknowledgements stall for one timeout
/// has stopped answering heartbeats too, and is lost already.
std::chrono::milliseconds unacknowledged_send_bound(const caf::actor_system& system);

/// Sets the kernel's bound on unacknowledged data (TCP_USER_TIMEOUT) to
/// `bound` on every TCP socket this process holds now; listening sockets
/// pass it on to the connections they accept. A connection whose data stays
/// unacknowledged that long then fails, and the middleman drops it.
void bound_unacknowledged_sends(std::chrono::milliseconds bound);

/// Both at once, for the sockets of `system`'s process.
void bound_unacknowledged_sends(const caf::actor_system& system);

} // namespace troupe::detail
