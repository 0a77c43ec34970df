// A small, fully specified random generator (splitmix64), so that shuffles and
// initial weights are the same on every platform and standard library.
#pragma once

#include <cstdint>

namespace troupe::detail {

/// Generates 64-bit values with splitmix64; identical everywhere.
class random_stream {
public:
  explicit random_stream(uint64_t seed) : state_(seed) {}

  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }

  /// Returns a uniform integer in [0, bound) (Lemire's multiply-shift).
  uint64_t below(uint64_t bound) {
    __extension__ using wide = unsigned __int128;
    return static_cast<uint64_t>((static_cast<wide>(next()) * bound) >> 64);
  }

  /// Returns a uniform float in [0, 1) from the top 24 bits.
  float unit_float() { return static_cast<float>(next() >> 40) * 0x1.0p-24f; }

private:
  uint64_t state_;
};

/// Mixes several values into one seed (for seeds derived from seed, epoch, replica).
inline uint64_t mix_seed(uint64_t a, uint64_t b, uint64_t c = 0) {
  random_stream s(a ^ (b * 0x9e3779b97f4a7c15ull) ^ (c * 0xc2b2ae3d27d4eb4full));
  return s.next();
}

} // namespace troupe::detail
