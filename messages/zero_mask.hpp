// A gradient's zeros, sent as a bit mask. A replica's slice of the first
// layer's gradient is exactly zero wherever an input is zero in every
// sample of its batch, and wherever a unit stayed inactive for all of them:
// across the network such a slice travels as one bit per value (set for a
// value whose bits are not all zero) and the values the bits select, in
// order (masked_floats.hpp). Lossless: -0 and every other nonzero pattern
// travel as they are.
// On x86 with SSSE3 a compare and a shuffle mask and spread four 32-bit or
// eight 16-bit words at a time; a portable loop does the rest, the same bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace troupe::detail {

/// Says whether `count` values may travel as a masked block of `wire_bytes`
/// bytes: a reader refuses one that stands for floats of more than
/// max_mask_expansion times its bytes (past a first MiB), so a frame can
/// never make a reader hold much more than the frame.
bool mask_expansion_allowed(size_t count, size_t wire_bytes);
constexpr size_t max_mask_expansion = 8;

/// Writes the mask of the `count` Words at `words` (any type of that size:
/// floats as their bits; (count + 7) / 8 bytes, bit i % 8 of byte i / 8 for
/// word i, the bits past `count` clear) and the nonzero words in order to
/// `kept` (room for `count`); returns how many it kept.
template <class Word>
size_t mask_zeros(const void* words, size_t count, uint8_t* mask, Word* kept);

/// mask_zeros as the portable loop alone writes it (tests: the same bytes).
template <class Word>
size_t mask_zeros_portable(const void* words, size_t count, uint8_t* mask, Word* kept);

/// Writes `count` Words to `words` (any type of that size) from a mask and
/// the `kept_count` words it selects: zero where a bit is clear. Returns
/// what was wrong, writing nothing: a mask of another length, bits set past
/// `count`, or a number of set bits other than `kept_count`. Empty when
/// written. Reads nothing past the kept words.
template <class Word>
std::string unmask_zeros(const uint8_t* mask, size_t mask_bytes, size_t count, const Word* kept,
                         size_t kept_count, void* words);

/// unmask_zeros as the portable loop alone writes it (tests: the same words).
template <class Word>
std::string unmask_zeros_portable(const uint8_t* mask, size_t mask_bytes, size_t count,
                                  const Word* kept, size_t kept_count, void* words);

} // namespace troupe::detail
