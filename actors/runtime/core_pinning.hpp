// Where replica threads run: optional pinning to cores (--pin-cores) and the
// batch scheduling class for compute threads. A sync step moves the
// gradient and the parameters between the replica's core and the store's;
// keeping the store on core 0 and replica i on core i % cores keeps that
// traffic in one core's cache where it can.
#pragma once

#include <caf/fwd.hpp>

namespace troupe::detail {

/// Returns how many cores this process may run on (its CPU affinity, which
/// a container or taskset may narrow), at least 1.
unsigned usable_cores();

/// Pins the calling thread to usable core `core` modulo usable_cores(): the
/// (core mod n)-th CPU of the process's affinity, in CPU order. False if the
/// system refused.
bool pin_this_thread(unsigned core);

/// Marks the calling thread as CPU-bound (Linux SCHED_BATCH): when the store
/// answers a replica that shares its core, the woken replica no longer
/// preempts the store before it has answered the others.
void schedule_as_batch_thread();

/// Makes every thread the actor system starts run on core 0 (its scheduler
/// workers and middleman); replicas re-pin themselves to their own core.
void pin_actor_system_threads(caf::actor_system_config& config);

} // namespace troupe::detail
