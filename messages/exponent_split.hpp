// fp32 values with their exponents apart, for a masked push
// (masked_floats.hpp): per value 4 bits, the largest exponent minus its own
// (15: 15 or more, the exponent then follows as an escape byte), and its
// mantissa | sign << 23 in 3 bytes. Portable loops, and on x86 with SSE4.1
// eight values at a time; both write and read the same bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace troupe::detail {

/// Bytes past the 3 * n of the mantissas that split_exponents may write.
constexpr size_t split_spare_bytes = 4;

/// Returns the largest exponent among `n` fp32 words.
uint8_t largest_exponent(const uint32_t* words, size_t n);

/// Writes the 4-bit distances of `n` words below `base` (their largest
/// exponent) to `nibbles` ((n + 1) / 2 bytes, the first low; an odd n's last
/// high half 0), their mantissas and signs to `lows` (3 * n bytes and
/// split_spare_bytes to spare), and appends the escaped exponents to `escapes`.
void split_exponents(const uint32_t* words, size_t n, uint8_t base, uint8_t* nibbles,
                     uint8_t* lows, std::vector<uint8_t>& escapes);

/// Writes `n` words back from what split_exponents wrote (the blocks' sizes
/// checked). Returns what was wrong: a distance over `base`, or escapes that
/// do not add up; empty when written.
std::string join_exponents(const uint8_t* nibbles, const uint8_t* lows, size_t n, uint8_t base,
                           const std::vector<uint8_t>& escapes, uint32_t* words);

/// The portable loops alone (tests: the same bytes and words).
void split_exponents_portable(const uint32_t* words, size_t n, uint8_t base, uint8_t* nibbles,
                              uint8_t* lows, std::vector<uint8_t>& escapes);
std::string join_exponents_portable(const uint8_t* nibbles, const uint8_t* lows, size_t n,
                                    uint8_t base, const std::vector<uint8_t>& escapes,
                                    uint32_t* words);

} // namespace troupe::detail
