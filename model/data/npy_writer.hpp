// Writes float tables in NumPy's .npy format, version 1.0, as numpy.save
// does, so that Python reads Troupe's outputs with numpy.load.
#pragma once

#include <cstddef>
#include <string>

namespace troupe::detail {

/// Returns the bytes of a float32 .npy file (version 1.0, little-endian,
/// C order) holding `values` shaped (rows, cols). values: (rows, cols).
std::string encode_npy(const float* values, size_t rows, size_t cols);

} // namespace troupe::detail
