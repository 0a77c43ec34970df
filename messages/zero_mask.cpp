// The zero mask's kernels: portable loops, and on x86 with SSSE3 a compare
// and a shuffle per four 32-bit or eight 16-bit words, from tables of their
// masks. Both write and read the same bytes. The portable loops are
// branch-free too: whether a value is zero is data, not a pattern a branch
// predictor could learn.
#include "messages/zero_mask.hpp"

#include <bitset>
#include <cstring>

#if defined(__SSSE3__)
#include <nmmintrin.h>
#include <tmmintrin.h>
#endif

namespace troupe::detail {

namespace {

template <class Word>
Word load_word(const unsigned char* at) {
  Word w;
  std::memcpy(&w, at, sizeof w);
  return w;
}

// Words [from, count) of `words` into the mask (from a multiple of 8) and
// `kept` from `n` on; returns the new `n`.
template <class Word>
size_t mask_tail(const unsigned char* words, size_t from, size_t count, uint8_t* mask,
                 Word* kept, size_t n) {
  for (size_t byte = from / 8; byte * 8 < count; ++byte) {
    const size_t end = std::min(count, byte * 8 + 8);
    unsigned bits = 0;
    for (size_t i = byte * 8; i < end; ++i) {
      const Word w = load_word<Word>(words + i * sizeof(Word));
      kept[n] = w; // overwritten by the next kept word when w is zero
      const unsigned set = w != 0;
      n += set;
      bits |= set << (i - byte * 8);
    }
    mask[byte] = static_cast<uint8_t>(bits);
  }
  return n;
}

// Words [from, count) from the mask and `kept` from `n` on (the mask checked).
template <class Word>
void unmask_tail(const uint8_t* mask, size_t from, size_t count, const Word* kept,
                 size_t kept_count, size_t n, unsigned char* out) {
  for (size_t i = from; i < count; ++i) {
    const unsigned bit = (mask[i / 8] >> (i % 8)) & 1u;
    const Word next = kept[std::min(n, kept_count - 1)]; // read whether or not it is taken
    const Word word = bit ? next : Word{0};
    std::memcpy(out + i * sizeof(Word), &word, sizeof word);
    n += bit;
  }
}

#if defined(__SSSE3__)
constexpr uint8_t zero_lane = 0x80; // a shuffle index that writes 0

// By the mask of a group's nonzero words (4 of 32 bits, or 8 of 16 bits):
// the shuffles that pack them to the front and spread them back.
struct mask_tables {
  alignas(16) uint8_t pack32[16][16];
  alignas(16) uint8_t spread32[16][16];
  alignas(16) uint8_t pack16[256][16];
  alignas(16) uint8_t spread16[256][16];

  mask_tables() {
    fill(4, 16, pack32[0], spread32[0]);
    fill(2, 256, pack16[0], spread16[0]);
  }

  static void fill(unsigned width, unsigned masks, uint8_t* pack, uint8_t* spread) {
    for (unsigned m = 0; m < masks; ++m) {
      uint8_t* to_front = pack + 16 * m;
      uint8_t* to_lanes = spread + 16 * m;
      std::memset(to_front, zero_lane, 16);
      std::memset(to_lanes, zero_lane, 16);
      unsigned kept = 0;
      for (unsigned lane = 0; lane < 16 / width; ++lane) {
        if (((m >> lane) & 1u) == 0)
          continue;
        for (unsigned b = 0; b < width; ++b) {
          to_front[kept * width + b] = static_cast<uint8_t>(lane * width + b);
          to_lanes[lane * width + b] = static_cast<uint8_t>(kept * width + b);
        }
        ++kept;
      }
    }
  }
};

const mask_tables tables;

// The nonzero lanes of a group: 4 bits for 32-bit words, 8 for 16-bit ones.
template <class Word>
unsigned nonzero_lanes(__m128i group) {
  const __m128i zero = _mm_setzero_si128();
  if (sizeof(Word) == 4)
    return ~static_cast<unsigned>(_mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(group, zero))))
           & 0xFu;
  const __m128i zeros = _mm_cmpeq_epi16(group, zero);
  return ~static_cast<unsigned>(_mm_movemask_epi8(_mm_packs_epi16(zeros, zeros))) & 0xFFu;
}

template <class Word>
size_t mask_groups(const unsigned char* words, size_t count, uint8_t* mask, Word* kept) {
  constexpr size_t lanes = 16 / sizeof(Word);
  const auto& pack = sizeof(Word) == 4 ? tables.pack32 : tables.pack16;
  auto* out = reinterpret_cast<unsigned char*>(kept);
  size_t n = 0;
  for (size_t i = 0; i + 8 <= count; i += 8) {
    unsigned bits = 0;
    for (size_t part = 0; part < 8; part += lanes) {
      const __m128i group =
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(words + (i + part) * sizeof(Word)));
      const unsigned lanes_set = nonzero_lanes<Word>(group);
      const __m128i packed = _mm_shuffle_epi8(
        group, _mm_load_si128(reinterpret_cast<const __m128i*>(pack[lanes_set])));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out + n * sizeof(Word)), packed);
      n += static_cast<size_t>(_mm_popcnt_u32(lanes_set));
      bits |= lanes_set << part;
    }
    mask[i / 8] = static_cast<uint8_t>(bits);
  }
  return n;
}

// Spreads whole groups of 8 words while 8 kept words are left to load at
// once; returns the first word left to the tail, `n` the kept words used.
template <class Word>
size_t unmask_groups(const uint8_t* mask, size_t count, const Word* kept, size_t kept_count,
                     unsigned char* out, size_t& n) {
  constexpr size_t lanes = 16 / sizeof(Word);
  const auto& spread = sizeof(Word) == 4 ? tables.spread32 : tables.spread16;
  const auto* in = reinterpret_cast<const unsigned char*>(kept);
  size_t i = 0;
  for (; i + 8 <= count && n + 8 <= kept_count; i += 8) {
    for (size_t part = 0; part < 8; part += lanes) {
      const unsigned lanes_set = (mask[i / 8] >> part) & ((1u << lanes) - 1u);
      const __m128i packed =
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + n * sizeof(Word)));
      const __m128i group = _mm_shuffle_epi8(
        packed, _mm_load_si128(reinterpret_cast<const __m128i*>(spread[lanes_set])));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out + (i + part) * sizeof(Word)), group);
      n += static_cast<size_t>(_mm_popcnt_u32(lanes_set));
    }
  }
  return i;
}
#endif

// What is wrong with a mask of `mask_bytes` for `count` words selecting
// `kept_count`; empty when it is right.
std::string mask_fault(const uint8_t* mask, size_t mask_bytes, size_t count, size_t kept_count) {
  if (mask_bytes != (count + 7) / 8)
    return "a zero mask of " + std::to_string(mask_bytes) + " bytes for "
           + std::to_string(count) + " values";
  size_t set = 0;
  for (size_t byte = 0; byte < mask_bytes; ++byte)
    set += std::bitset<8>(mask[byte]).count();
  if (count % 8 != 0 && (mask[mask_bytes - 1] >> (count % 8)) != 0)
    return "a zero mask with bits set past its " + std::to_string(count) + " values";
  if (set != kept_count)
    return "a zero mask that selects " + std::to_string(set) + " values of "
           + std::to_string(kept_count);
  return {};
}

} // namespace

bool mask_expansion_allowed(size_t count, size_t wire_bytes) {
  constexpr size_t first_mib = size_t{1} << 20;
  return count <= (max_mask_expansion * wire_bytes + first_mib) / sizeof(float);
}

template <class Word>
size_t mask_zeros_portable(const void* words, size_t count, uint8_t* mask, Word* kept) {
  return mask_tail(static_cast<const unsigned char*>(words), 0, count, mask, kept, 0);
}

template <class Word>
size_t mask_zeros(const void* words, size_t count, uint8_t* mask, Word* kept) {
  const auto* bytes = static_cast<const unsigned char*>(words);
#if defined(__SSSE3__)
  const size_t n = mask_groups(bytes, count, mask, kept);
  return mask_tail(bytes, count / 8 * 8, count, mask, kept, n);
#else
  return mask_tail(bytes, 0, count, mask, kept, 0);
#endif
}

template <class Word>
std::string unmask_zeros_portable(const uint8_t* mask, size_t mask_bytes, size_t count,
                                  const Word* kept, size_t kept_count, void* words) {
  if (auto fault = mask_fault(mask, mask_bytes, count, kept_count); !fault.empty())
    return fault;
  auto* out = static_cast<unsigned char*>(words);
  if (kept_count == 0 && count > 0)
    std::memset(out, 0, count * sizeof(Word));
  else if (kept_count > 0)
    unmask_tail(mask, 0, count, kept, kept_count, 0, out);
  return {};
}

template <class Word>
std::string unmask_zeros(const uint8_t* mask, size_t mask_bytes, size_t count, const Word* kept,
                         size_t kept_count, void* words) {
#if defined(__SSSE3__)
  if (auto fault = mask_fault(mask, mask_bytes, count, kept_count); !fault.empty())
    return fault;
  auto* out = static_cast<unsigned char*>(words);
  if (kept_count == 0) {
    if (count > 0)
      std::memset(out, 0, count * sizeof(Word));
    return {};
  }
  size_t n = 0;
  const size_t tail = unmask_groups(mask, count, kept, kept_count, out, n);
  unmask_tail(mask, tail, count, kept, kept_count, n, out);
  return {};
#else
  return unmask_zeros_portable(mask, mask_bytes, count, kept, kept_count, words);
#endif
}

#define TROUPE_ZERO_MASK_WORD(Word)                                                          \
  template size_t mask_zeros(const void*, size_t, uint8_t*, Word*);                          \
  template size_t mask_zeros_portable(const void*, size_t, uint8_t*, Word*);                 \
  template std::string unmask_zeros(const uint8_t*, size_t, size_t, const Word*, size_t,     \
                                    void*);                                                  \
  template std::string unmask_zeros_portable(const uint8_t*, size_t, size_t, const Word*,    \
                                             size_t, void*);
TROUPE_ZERO_MASK_WORD(uint32_t)
TROUPE_ZERO_MASK_WORD(uint16_t)
#undef TROUPE_ZERO_MASK_WORD

} // namespace troupe::detail
