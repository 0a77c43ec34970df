// The one place that registers every message type with CAF.
#pragma once

namespace caf {
class actor_system_config;
} // namespace caf

namespace troupe::detail {

/// Registers every type in messages/ and Troupe's error category; every
/// program and test calls it on its config before building an actor system.
void register_messages(caf::actor_system_config& config);

} // namespace troupe::detail
