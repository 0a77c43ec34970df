// NaN and +-Inf are the floats with all exponent bits set: the largest
// magnitudes as unsigned integers. An integer max-reduction vectorizes (a
// float comparison loop would not, nor does an or of comparisons well): 50k
// floats in L2 take 1.5 us in the AVX-512 clone, against 3 us for the or of
// comparisons and 9 us for the SSE baseline; a sync round waits for it.
#include "model/finite_check.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace troupe {

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
bool has_non_finite(const float* values, size_t count) {
  uint32_t largest_magnitude = 0;
  for (size_t i = 0; i < count; ++i) {
    uint32_t bits;
    std::memcpy(&bits, values + i, sizeof bits);
    largest_magnitude = std::max(largest_magnitude, bits & 0x7fffffffu);
  }
  return largest_magnitude >= 0x7f800000u;
}

} // namespace troupe
