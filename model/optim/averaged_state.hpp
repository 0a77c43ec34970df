// Model state in a store shard's range (batch normalization's moving
// statistics): floats the store does not optimize but moves by the round's
// mean of the changes the replicas ask for, p <- p - sum_r w_r (p - new_r),
// which leaves their weighted mean of new values (model::state_spans).
#pragma once

#include <memory>
#include <vector>

#include <troupe/model.hpp>

#include "model/optim/optimizer.hpp"

namespace troupe::detail {

/// Wraps `inner` (a host optimizer) so that the floats of `spans` (offsets
/// within the buffer it steps, in order) take p - g instead of inner's step:
/// no learning rate, momentum or weight decay, the other floats' bits
/// unchanged. With no spans, returns `inner` itself.
std::unique_ptr<optimizer> with_averaged_state(std::unique_ptr<optimizer> inner,
                                               std::vector<parameter_span> spans);

/// Returns the parts of `spans` (over the whole parameter buffer) within
/// [offset, offset + count), as offsets from `offset`: a shard's share.
std::vector<parameter_span> spans_within(const std::vector<parameter_span>& spans,
                                         size_t offset, size_t count);

} // namespace troupe::detail
