// The store's check that a pushed gradient holds only finite floats, and the
// largest magnitude a replica bounds its gradient with instead.
#pragma once

#include <cstddef>

namespace troupe::detail {

/// True if any of `count` values is NaN or +-Inf.
bool has_non_finite(const float* values, size_t count);

/// Returns the largest |value| of `count` values (0 for none), or +Inf if
/// any of them is NaN or +-Inf.
float largest_magnitude(const float* values, size_t count);

} // namespace troupe::detail
