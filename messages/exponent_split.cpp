// Splitting fp32 exponents off and joining them back, value by value or
// eight at a time.
#include "messages/exponent_split.hpp"

#include <algorithm>
#include <cstring>

#if defined(__SSE4_1__)
#include <smmintrin.h>
#endif

namespace troupe::detail {

namespace {

constexpr uint32_t escaped = 15;

uint32_t exponent_of(uint32_t w) { return (w >> 23) & 0xFFu; }
uint32_t low_of(uint32_t w) { return (w & 0x7FFFFFu) | ((w >> 8) & 0x800000u); }

// Values [from, n) one by one; `from` is even.
void split_tail(const uint32_t* words, size_t from, size_t n, uint8_t base, uint8_t* nibbles,
                uint8_t* lows, std::vector<uint8_t>& escapes) {
  for (size_t j = from; j < n; ++j) {
    const uint32_t exponent = exponent_of(words[j]);
    const uint32_t nibble = std::min(base - exponent, escaped);
    if (j % 2 == 0)
      nibbles[j / 2] = static_cast<uint8_t>(nibble);
    else
      nibbles[j / 2] = static_cast<uint8_t>(nibbles[j / 2] | nibble << 4);
    const uint32_t low = low_of(words[j]);
    std::memcpy(lows + 3 * j, &low, sizeof low); // the next value overwrites the 4th byte
    if (nibble == escaped)
      escapes.push_back(static_cast<uint8_t>(exponent));
  }
}

// Values [from, n) one by one, escapes from `escape` on; what was wrong, or empty.
std::string join_tail(const uint8_t* nibbles, const uint8_t* lows, size_t from, size_t n,
                      uint8_t base, const std::vector<uint8_t>& escapes, size_t escape,
                      uint32_t* words) {
  for (size_t j = from; j < n; ++j) {
    const uint32_t nibble = (nibbles[j / 2] >> (4 * (j % 2))) & 0xFu;
    if (nibble != escaped && nibble > base)
      return "an exponent " + std::to_string(nibble) + " below the largest, "
             + std::to_string(base);
    if (nibble == escaped && escape == escapes.size())
      return "more escaped exponents than the " + std::to_string(escapes.size()) + " sent";
    const uint32_t exponent = nibble == escaped ? escapes[escape++] : base - nibble;
    uint32_t low = 0;
    std::memcpy(&low, lows + 3 * j, 3);
    words[j] = (low & 0x800000u) << 8 | exponent << 23 | (low & 0x7FFFFFu);
  }
  if (escape != escapes.size())
    return std::to_string(escapes.size()) + " escaped exponents for " + std::to_string(escape);
  return {};
}

#if defined(__SSE4_1__)
// Bytes 0-2 of each 32-bit lane packed to 12, and spread back.
const __m128i pack_lows = _mm_setr_epi8(0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, -1, -1, -1, -1);
const __m128i spread_lows = _mm_setr_epi8(0, 1, 2, -1, 3, 4, 5, -1, 6, 7, 8, -1, 9, 10, 11, -1);

__m128i lows_of(__m128i w) {
  return _mm_or_si128(_mm_and_si128(w, _mm_set1_epi32(0x7FFFFF)),
                      _mm_and_si128(_mm_srli_epi32(w, 8), _mm_set1_epi32(0x800000)));
}

// Eight 4-bit values, one a byte in the low 8 bytes of `b`, two a byte.
uint32_t pair_nibbles(__m128i b) {
  const auto x = static_cast<uint64_t>(_mm_cvtsi128_si64(b));
  const uint64_t t = x | (x >> 4);
  return static_cast<uint32_t>((t & 0xFFu) | ((t >> 8) & 0xFF00u) | ((t >> 16) & 0xFF0000u)
                               | ((t >> 24) & 0xFF000000u));
}

// Returns the first value left to the tail.
size_t split_groups(const uint32_t* words, size_t n, uint8_t base, uint8_t* nibbles,
                    uint8_t* lows, std::vector<uint8_t>& escapes) {
  const __m128i top = _mm_set1_epi32(base);
  const __m128i fifteen = _mm_set1_epi32(escaped);
  size_t j = 0;
  for (; j + 8 <= n; j += 8) {
    __m128i nibble[2];
    for (int half = 0; half < 2; ++half) {
      const __m128i w = _mm_loadu_si128(reinterpret_cast<const __m128i*>(words + j + 4 * half));
      const __m128i exponent = _mm_and_si128(_mm_srli_epi32(w, 23), _mm_set1_epi32(0xFF));
      nibble[half] = _mm_min_epu32(_mm_sub_epi32(top, exponent), fifteen);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(lows + 3 * j + 12 * half),
                       _mm_shuffle_epi8(lows_of(w), pack_lows));
    }
    const uint32_t paired = pair_nibbles(
      _mm_packus_epi16(_mm_packs_epi32(nibble[0], nibble[1]), _mm_setzero_si128()));
    std::memcpy(nibbles + j / 2, &paired, sizeof paired);
    const int escapes_here =
      _mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(nibble[0], fifteen)))
      | _mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(nibble[1], fifteen))) << 4;
    for (int lane = 0; escapes_here != 0 && lane < 8; ++lane)
      if ((escapes_here >> lane) & 1)
        escapes.push_back(static_cast<uint8_t>(exponent_of(words[j + lane])));
  }
  return j;
}

// Eight values a group while the group's 16-byte loads stay within the
// mantissas, and no distance is over `base`; returns the first value left to
// the tail, `escape` the escapes used.
size_t join_groups(const uint8_t* nibbles, const uint8_t* lows, size_t n, uint8_t base,
                   const std::vector<uint8_t>& escapes, size_t& escape, uint32_t* words) {
  const __m128i top = _mm_set1_epi32(base);
  const __m128i fifteen = _mm_set1_epi32(escaped);
  size_t j = 0;
  for (; 3 * j + 28 <= 3 * n; j += 8) {
    uint32_t paired = 0;
    std::memcpy(&paired, nibbles + j / 2, sizeof paired);
    const __m128i bytes = _mm_cvtsi32_si128(static_cast<int>(paired));
    const __m128i lo = _mm_and_si128(bytes, _mm_set1_epi8(0x0F));
    const __m128i hi = _mm_and_si128(_mm_srli_epi16(bytes, 4), _mm_set1_epi8(0x0F));
    const __m128i eight = _mm_unpacklo_epi8(lo, hi); // nibbles in order, a byte each
    __m128i nibble[2] = {_mm_cvtepu8_epi32(eight), _mm_cvtepu8_epi32(_mm_srli_si128(eight, 4))};
    int escapes_here = 0, over = 0;
    for (int half = 0; half < 2; ++half) {
      const __m128i is_escape = _mm_cmpeq_epi32(nibble[half], fifteen);
      escapes_here |= _mm_movemask_ps(_mm_castsi128_ps(is_escape)) << (4 * half);
      over |= _mm_movemask_ps(_mm_castsi128_ps(
                _mm_andnot_si128(is_escape, _mm_cmpgt_epi32(nibble[half], top))))
              << (4 * half);
    }
    const auto escapes_used = static_cast<size_t>(__builtin_popcount(escapes_here));
    if (over != 0 || escape + escapes_used > escapes.size())
      return j; // the tail names what is wrong
    for (int half = 0; half < 2; ++half) {
      const __m128i low = _mm_shuffle_epi8(
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(lows + 3 * j + 12 * half)), spread_lows);
      // An escaped lane's is patched below; masked so it cannot reach the sign.
      const __m128i exponent =
        _mm_and_si128(_mm_sub_epi32(top, nibble[half]), _mm_set1_epi32(0xFF));
      const __m128i w = _mm_or_si128(
        _mm_or_si128(_mm_slli_epi32(_mm_and_si128(low, _mm_set1_epi32(0x800000)), 8),
                     _mm_slli_epi32(exponent, 23)),
        _mm_and_si128(low, _mm_set1_epi32(0x7FFFFF)));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(words + j + 4 * half), w);
    }
    for (int lane = 0; escapes_here != 0 && lane < 8; ++lane)
      if ((escapes_here >> lane) & 1)
        words[j + lane] = (words[j + lane] & ~(0xFFu << 23))
                          | static_cast<uint32_t>(escapes[escape++]) << 23;
  }
  return j;
}
#endif

} // namespace

uint8_t largest_exponent(const uint32_t* words, size_t n) {
  uint32_t largest = 0;
  size_t j = 0;
#if defined(__SSE4_1__)
  __m128i top = _mm_setzero_si128();
  for (; j + 4 <= n; j += 4)
    top = _mm_max_epu32(top, _mm_srli_epi32(_mm_slli_epi32(
                               _mm_loadu_si128(reinterpret_cast<const __m128i*>(words + j)), 1),
                                           24));
  alignas(16) uint32_t lanes[4];
  _mm_store_si128(reinterpret_cast<__m128i*>(lanes), top);
  largest = std::max(std::max(lanes[0], lanes[1]), std::max(lanes[2], lanes[3]));
#endif
  for (; j < n; ++j)
    largest = std::max(largest, exponent_of(words[j]));
  return static_cast<uint8_t>(largest);
}

void split_exponents_portable(const uint32_t* words, size_t n, uint8_t base, uint8_t* nibbles,
                              uint8_t* lows, std::vector<uint8_t>& escapes) {
  split_tail(words, 0, n, base, nibbles, lows, escapes);
}

void split_exponents(const uint32_t* words, size_t n, uint8_t base, uint8_t* nibbles,
                     uint8_t* lows, std::vector<uint8_t>& escapes) {
  size_t from = 0;
#if defined(__SSE4_1__)
  from = split_groups(words, n, base, nibbles, lows, escapes);
#endif
  split_tail(words, from, n, base, nibbles, lows, escapes);
}

std::string join_exponents_portable(const uint8_t* nibbles, const uint8_t* lows, size_t n,
                                    uint8_t base, const std::vector<uint8_t>& escapes,
                                    uint32_t* words) {
  return join_tail(nibbles, lows, 0, n, base, escapes, 0, words);
}

std::string join_exponents(const uint8_t* nibbles, const uint8_t* lows, size_t n, uint8_t base,
                           const std::vector<uint8_t>& escapes, uint32_t* words) {
  size_t from = 0, escape = 0;
#if defined(__SSE4_1__)
  from = join_groups(nibbles, lows, n, base, escapes, escape, words);
#endif
  return join_tail(nibbles, lows, from, n, base, escapes, escape, words);
}

} // namespace troupe::detail
