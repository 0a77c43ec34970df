// Optional pinning of threads to cores (--pin-cores). A sync step moves the
// gradient and the parameters between the replica's core and the store's;
// keeping the store on core 0 and replica i on core i % cores keeps that
// traffic in one core's cache where it can (1 replica: 64k -> 98k samples/s).
#pragma once

#include <caf/fwd.hpp>

namespace troupe {

/// Pins the calling thread to `core` modulo the number of cores; false if
/// the system refused.
bool pin_this_thread(unsigned core);

/// Makes every thread the actor system starts run on core 0 (its scheduler
/// workers and middleman); replicas re-pin themselves to their own core.
void pin_actor_system_threads(caf::actor_system_config& config);

} // namespace troupe
