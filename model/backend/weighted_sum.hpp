// A round's reduction as the ops take it: weighted gradient terms, and the
// reference sum whose bits every fused step (a backend's adam_update_sum, an
// optimizer's apply_weighted_sum) gives.
#pragma once

#include <cstddef>
#include <vector>

namespace troupe::detail {

/// One term of a weighted gradient sum: weight x gradient.
struct weighted_gradient {
  float weight;
  const float* gradient;
};

/// Writes the elements [offset, offset + count) of the sum of `terms` to
/// `out`: weight_0 g_0 + weight_1 g_1 + ..., added in the order given, with
/// denormals flushed. The reference every fused step gives the bits of.
void weighted_gradient_sum(const std::vector<weighted_gradient>& terms, size_t offset,
                           size_t count, float* out);

} // namespace troupe::detail
