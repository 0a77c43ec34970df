// CAF's work-sharing scheduler (one central queue) whose idle workers poll
// the queue for a short while before they sleep on its condition variable.
#pragma once

#include <caf/fwd.hpp>

namespace troupe::detail {

/// The `scheduler.policy` that names it; Troupe's programs default to it.
constexpr char spinning_scheduler_policy[] = "spinning";

/// Makes `config`'s actor system run the spinning work-sharing scheduler
/// (whatever its scheduler.policy says): call it before the system is built.
void use_spinning_scheduler(caf::actor_system_config& config);

} // namespace troupe::detail
