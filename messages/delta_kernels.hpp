// The loops that code and apply an answer's XORs (messages/answer_delta.hpp):
// per value a 2-bit tag, four to a byte, and the XOR's low bytes the tag
// calls for. Each comes as portable code and, on x86 with SSSE3, as a
// shuffle per four values from tables of the 256 tag bytes; both write and
// read the same bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

namespace troupe::detail {

/// Bytes past the last value's that code_xors may write (and a reader may
/// load at once): a group of four at its widest.
constexpr size_t delta_spare_bytes = 16;

/// Returns the bytes of tags `count` values take.
inline size_t delta_tag_bytes(size_t count) { return (count + 3) / 4; }

/// Writes the tags of `count` XORs (`fp32`: 32-bit ones, else 16-bit ones
/// in the low halves of the words) from `tags` on and their bytes from
/// `out` on; returns the end of the bytes. `out` has delta_spare_bytes to
/// spare past the widest code.
uint8_t* code_xors(const uint32_t* xors, size_t count, bool fp32, uint8_t* tags,
                   uint8_t* out);

/// Applies the XORs of `count` values, their tags from `tags` on and their
/// bytes from `next` on (checked by delta_payload_length: none past `end`),
/// shifted left by `shift`, to `words`; returns where the next value's bytes
/// start.
const uint8_t* apply_xors(const uint8_t* tags, size_t count, bool fp32, const uint8_t* next,
                          const uint8_t* end, uint32_t shift, uint32_t* words);

/// Returns the payload's length the tags of `count` values call for, or
/// nothing for a tag 3 of a 16-bit code or a tag past the last value that
/// is not 0.
std::optional<size_t> delta_payload_length(const uint8_t* tags, size_t count, bool fp32);

/// The portable loops alone, which the shuffles must match (tests).
uint8_t* code_xors_portable(const uint32_t* xors, size_t count, bool fp32, uint8_t* tags,
                            uint8_t* out);
const uint8_t* apply_xors_portable(const uint8_t* tags, size_t count, bool fp32,
                                   const uint8_t* next, const uint8_t* end, uint32_t shift,
                                   uint32_t* words);

} // namespace troupe::detail
