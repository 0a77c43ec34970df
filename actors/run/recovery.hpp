// The end of a recovery: the round a respawn or a store heal restarted from
// has closed on every shard, and the run trains on. What the metrics'
// recovery records time, from the news of the loss.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "actors/run/epoch_phases.hpp"

namespace troupe::detail {

/// Asks every shard to say when store round `round` has closed, then tells
/// the observer a recovery_record (`after`: "respawn" or "store_heal", of
/// membership epoch `membership`) timed from `noticed`, the news of the
/// loss. Records nothing under a policy without rounds (async, ssp), nor
/// when a heal, a failure or the run's end comes first.
void watch_recovery(coordinator_pointer self, const std::string& after, uint64_t round,
                    uint64_t membership, std::chrono::steady_clock::time_point noticed);

} // namespace troupe::detail
