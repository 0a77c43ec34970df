// NaN and +-Inf are the floats with all exponent bits set. Integer bit tests
// vectorize, where a float comparison loop would not; the wider clones halve
// the check of a 50k-float slice (9 -> 4 us), which a sync round waits for.
#include "model/finite_check.hpp"

#include <cstdint>
#include <cstring>

namespace troupe {

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx2", "default")))
#endif
bool has_non_finite(const float* values, size_t count) {
  uint32_t bad = 0;
  for (size_t i = 0; i < count; ++i) {
    uint32_t bits;
    std::memcpy(&bits, values + i, sizeof bits);
    bad |= static_cast<uint32_t>((bits & 0x7f800000u) == 0x7f800000u);
  }
  return bad != 0;
}

} // namespace troupe
