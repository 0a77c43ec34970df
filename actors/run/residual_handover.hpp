// --wire=int8: a moving replica's old actor hands its error-feedback
// residual to the new one, whose order waits for it, so a move keeps the
// run's bits.
#pragma once

#include <cstddef>

#include "actors/run/epoch_phases.hpp"

namespace troupe::detail {

/// Asks replica `index`'s old actor `old` for its residual, which ends it
/// (in place of an exit); its new actor's order waits for the answer.
void ask_handover(coordinator_pointer self, size_t index, const replica_actor& old);

/// Orders replica `index`'s new actor `order`'s epoch: with the residual its
/// old actor handed over for the order's round, at once or once that answer
/// came (without one if it failed).
void order_replacement(coordinator_pointer self, size_t index, epoch_order order);

} // namespace troupe::detail
