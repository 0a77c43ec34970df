// Coding and applying an answer's XORs, value by value or four at a time.
#include "messages/delta_kernels.hpp"

#include <cstring>

#if defined(__SSSE3__)
#include <tmmintrin.h>
#endif

namespace troupe::detail {

// A value's low bytes are its first in memory: whole words are copied out
// and in, and only the tag's bytes count.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "coded answers need a little-endian host");

namespace {

// A tag says how many of the XOR's low bytes travel: fp32 0, 2, 3 or 4 (a
// 1-byte XOR, the rarest, goes as 2); 16-bit 0, 1 or 2, and no tag 3.
uint32_t width_of_tag(bool fp32, uint32_t tag) { return fp32 ? tag + (tag != 0) : tag; }
uint32_t tag_of(bool fp32, uint32_t x) {
  if (fp32)
    return (x != 0) + (x >= (1u << 16)) + (x >= (1u << 24));
  return (x != 0) + (x >= (1u << 8));
}

constexpr uint32_t width_masks[5] = {0, 0xFFu, 0xFFFFu, 0xFFFFFFu, 0xFFFFFFFFu};
constexpr uint8_t invalid_group = 0xFF;
constexpr uint8_t zero_byte = 0x80; // a shuffle index that writes 0

// What a tag byte's four values take, by tag byte, for fp32 [1] and 16-bit
// codes [0]: their bytes in all (invalid_group: a 16-bit tag 3), and the
// shuffles that spread their bytes to four words and gather them back.
struct group_tables {
  uint8_t length[2][256];
  alignas(16) uint8_t spread[2][256][16];
  alignas(16) uint8_t gather[2][256][16];

  group_tables() {
    for (int wide = 0; wide < 2; ++wide)
      for (uint32_t four = 0; four < 256; ++four)
        fill(wide == 1, four);
  }

  void fill(bool fp32, uint32_t four) {
    uint8_t* to_words = spread[fp32][four];
    uint8_t* to_bytes = gather[fp32][four];
    std::memset(to_words, zero_byte, 16);
    std::memset(to_bytes, zero_byte, 16);
    uint32_t offset = 0;
    bool valid = true;
    for (uint32_t j = 0; j < 4; ++j) {
      const uint32_t tag = (four >> (2 * j)) & 3u;
      valid = valid && (fp32 || tag != 3);
      const uint32_t width = valid ? width_of_tag(fp32, tag) : 0;
      for (uint32_t b = 0; b < width; ++b) {
        to_words[4 * j + b] = static_cast<uint8_t>(offset + b);
        to_bytes[offset + b] = static_cast<uint8_t>(4 * j + b);
      }
      offset += width;
    }
    length[fp32][four] = valid ? static_cast<uint8_t>(offset) : invalid_group;
  }
};

const group_tables& tables() {
  static const group_tables built;
  return built;
}

// Codes values [first, count) one by one.
uint8_t* code_each(const uint32_t* xors, size_t first, size_t count, bool fp32, uint8_t* tags,
                   uint8_t* out) {
  for (size_t i = first; i < count; i += 4) {
    uint32_t four = 0;
    for (size_t j = 0; j < 4 && i + j < count; ++j) {
      const uint32_t tag = tag_of(fp32, xors[i + j]);
      four |= tag << (2 * j);
      std::memcpy(out, &xors[i + j], sizeof(uint32_t));
      out += width_of_tag(fp32, tag);
    }
    tags[i / 4] = static_cast<uint8_t>(four);
  }
  return out;
}

// Reads a value's XOR of `width` bytes at `at`: a whole word, masked, where
// 4 bytes are left before `end`.
uint32_t read_xor(const uint8_t* at, uint32_t width, const uint8_t* end) {
  uint32_t x = 0;
  if (end - at >= 4) {
    std::memcpy(&x, at, sizeof(uint32_t));
    return x & width_masks[width];
  }
  for (uint32_t b = 0; b < width; ++b)
    x |= static_cast<uint32_t>(at[b]) << (8 * b);
  return x;
}

// Applies values [first, count) one by one.
const uint8_t* apply_each(const uint8_t* tags, size_t first, size_t count, bool fp32,
                          const uint8_t* next, const uint8_t* end, uint32_t shift,
                          uint32_t* words) {
  for (size_t i = first; i < count; ++i) {
    const uint32_t width = width_of_tag(fp32, (tags[i / 4] >> (2 * (i % 4))) & 3u);
    words[i] ^= read_xor(next, width, end) << shift;
    next += width;
  }
  return next;
}

} // namespace

uint8_t* code_xors_portable(const uint32_t* xors, size_t count, bool fp32, uint8_t* tags,
                            uint8_t* out) {
  return code_each(xors, 0, count, fp32, tags, out);
}

const uint8_t* apply_xors_portable(const uint8_t* tags, size_t count, bool fp32,
                                   const uint8_t* next, const uint8_t* end, uint32_t shift,
                                   uint32_t* words) {
  return apply_each(tags, 0, count, fp32, next, end, shift, words);
}

#if defined(__SSSE3__)

namespace {

// Four 4-bit lane masks (bit j: lane j is not zero) spread to a tag byte's
// 2-bit fields, where they add up to the tags.
uint32_t spread_bits(uint32_t mask) {
  return (mask & 1u) | ((mask & 2u) << 1) | ((mask & 4u) << 2) | ((mask & 8u) << 3);
}

uint32_t nonzero_lanes(__m128i v) {
  const __m128i zero = _mm_cmpeq_epi32(v, _mm_setzero_si128());
  return ~static_cast<uint32_t>(_mm_movemask_ps(_mm_castsi128_ps(zero))) & 0xFu;
}

} // namespace

uint8_t* code_xors(const uint32_t* xors, size_t count, bool fp32, uint8_t* tags,
                   uint8_t* out) {
  const auto& t = tables();
  const size_t whole_groups = count / 4 * 4;
  for (size_t i = 0; i < whole_groups; i += 4) {
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(xors + i));
    uint32_t four = spread_bits(nonzero_lanes(x));
    if (fp32)
      four += spread_bits(nonzero_lanes(_mm_srli_epi32(x, 16)))
              + spread_bits(nonzero_lanes(_mm_srli_epi32(x, 24)));
    else
      four += spread_bits(nonzero_lanes(_mm_srli_epi32(x, 8)));
    const __m128i order = _mm_load_si128(reinterpret_cast<const __m128i*>(t.gather[fp32][four]));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm_shuffle_epi8(x, order));
    out += t.length[fp32][four];
    tags[i / 4] = static_cast<uint8_t>(four);
  }
  return code_each(xors, whole_groups, count, fp32, tags, out);
}

const uint8_t* apply_xors(const uint8_t* tags, size_t count, bool fp32, const uint8_t* next,
                          const uint8_t* end, uint32_t shift, uint32_t* words) {
  const auto& t = tables();
  const __m128i by = _mm_cvtsi32_si128(static_cast<int>(shift));
  size_t i = 0;
  for (; i + 4 <= count && end - next >= 16; i += 4) {
    const uint32_t four = tags[i / 4];
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(next));
    const __m128i order = _mm_load_si128(reinterpret_cast<const __m128i*>(t.spread[fp32][four]));
    const __m128i x = _mm_sll_epi32(_mm_shuffle_epi8(bytes, order), by);
    auto* at = reinterpret_cast<__m128i*>(words + i);
    _mm_storeu_si128(at, _mm_xor_si128(_mm_loadu_si128(at), x));
    next += t.length[fp32][four];
  }
  return apply_each(tags, i, count, fp32, next, end, shift, words);
}

#else

uint8_t* code_xors(const uint32_t* xors, size_t count, bool fp32, uint8_t* tags,
                   uint8_t* out) {
  return code_each(xors, 0, count, fp32, tags, out);
}

const uint8_t* apply_xors(const uint8_t* tags, size_t count, bool fp32, const uint8_t* next,
                          const uint8_t* end, uint32_t shift, uint32_t* words) {
  return apply_each(tags, 0, count, fp32, next, end, shift, words);
}

#endif

std::optional<size_t> delta_payload_length(const uint8_t* tags, size_t count, bool fp32) {
  const uint8_t* length = tables().length[fp32];
  const size_t groups = delta_tag_bytes(count);
  size_t total = 0;
  bool bad = false;
  for (size_t g = 0; g < groups; ++g) {
    bad |= length[tags[g]] == invalid_group;
    total += length[tags[g]];
  }
  const size_t rest = count % 4;
  if (rest != 0 && (tags[groups - 1] >> (2 * rest)) != 0)
    bad = true;
  if (bad)
    return std::nullopt;
  return total;
}

} // namespace troupe::detail
