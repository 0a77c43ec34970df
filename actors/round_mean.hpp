// One round's step for the policies that reduce rounds (sync, delayed): the
// batch-weighted mean of its gradients, summed in replica-index order.
#pragma once

#include <cstdint>
#include <map>

#include "actors/update_policy.hpp"

namespace troupe {

/// Applies the step of one round's pushes (by replica index): the mean of
/// their gradients weighted by batch size, summed in replica order (never in
/// arrival order, so the bits never depend on timing) and fused with the
/// optimizer step; a single gradient carrying the whole round is applied as
/// it is. Applies nothing if no push has samples.
void apply_round_mean(const std::map<uint32_t, gradient_push>& pushes, store_port& store);

} // namespace troupe
