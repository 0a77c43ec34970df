// The store's check that a pushed gradient holds only finite floats.
#pragma once

#include <cstddef>

namespace troupe {

/// True if any of `count` values is NaN or +-Inf.
bool has_non_finite(const float* values, size_t count);

} // namespace troupe
