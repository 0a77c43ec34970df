// NaN and +-Inf are the floats with all exponent bits set: the largest
// magnitudes as unsigned integers, whose order is the order of the floats'
// magnitudes. An integer max-reduction vectorizes (a float comparison loop
// would not, nor does an or of comparisons well), and a sync round waits
// for it.
#include "model/finite_check.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>

namespace troupe::detail {

namespace {

constexpr uint32_t infinity_bits = 0x7f800000u;

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
uint32_t largest_magnitude_bits(const float* values, size_t count) {
  uint32_t largest = 0;
  for (size_t i = 0; i < count; ++i) {
    uint32_t bits;
    std::memcpy(&bits, values + i, sizeof bits);
    largest = std::max(largest, bits & 0x7fffffffu);
  }
  return largest;
}

} // namespace

bool has_non_finite(const float* values, size_t count) {
  return largest_magnitude_bits(values, count) >= infinity_bits;
}

float largest_magnitude(const float* values, size_t count) {
  const uint32_t bits = largest_magnitude_bits(values, count);
  if (bits >= infinity_bits)
    return std::numeric_limits<float>::infinity();
  float magnitude;
  std::memcpy(&magnitude, &bits, sizeof magnitude);
  return magnitude;
}

} // namespace troupe::detail
