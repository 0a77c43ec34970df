// A float view coded for the wire with its zeros as a mask (zero_mask.hpp):
// the mask, then the values it selects. fp32 values travel with their
// exponents apart: a gradient's exponents crowd below its largest, so each
// takes 4 bits (the largest minus it) beside its sign and mantissa's 3
// bytes, and one 15 or more below takes an escape byte. 16-bit values travel
// whole. Lossless: the reader gets the very bits.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <caf/deserializer.hpp>
#include <caf/error.hpp>
#include <caf/serializer.hpp>

#include "messages/float_codec.hpp"

namespace troupe::detail {

/// Holds `count` floats of `codec` (fp32, bf16 or fp16) as a mask and the
/// values it selects.
struct masked_floats {
  float_codec codec = float_codec::fp32;
  uint64_t count = 0;
  std::vector<uint8_t> mask; // (count + 7) / 8 bytes: bit i % 8 of byte i / 8 for value i
  uint64_t kept = 0;         // the values the mask selects
  // fp32: the largest exponent among them; per value 4 bits (two a byte,
  // the first low), the largest minus its exponent or 15 when that is 15
  // or more; its mantissa | sign << 23 in 3 bytes; and the exponent of each
  // 15, in order.
  uint8_t base = 0;
  std::vector<uint8_t> exponents;
  std::vector<uint8_t> lows;
  std::vector<uint8_t> escapes;
  // bf16, fp16: the values.
  std::vector<uint16_t> words;

  /// Returns the bytes its blocks take on the wire, their lengths aside.
  size_t wire_bytes() const;
};

/// Codes `count` floats of `codec` (rounded to it already); nothing where
/// that would not be smaller than the values whole, or for int8.
std::optional<masked_floats> mask_floats(float_codec codec, const float* values, size_t count);

/// Writes the floats `m` stands for to a fresh buffer in `out`. Returns what
/// was wrong, with `out` unspecified: blocks of other lengths than the count
/// and the mask call for, a mask that selects another number of values,
/// bits past the count, exponents or escapes that do not add up, an exponent
/// below 0, or more floats than max_mask_expansion times the bytes (checked
/// before anything is allocated). Empty when written.
std::string unmask_floats(const masked_floats& m, std::shared_ptr<float>& out);

/// Writes the blocks, each with its length (the codec and count are the
/// view's, written before).
caf::error write_masked(caf::serializer& sink, const masked_floats& m);

/// Reads the blocks of `count` floats of `codec`; a block longer than the
/// frame's remaining bytes fails it unread.
caf::error read_masked(caf::deserializer& source, float_codec codec, uint64_t count,
                       masked_floats& m);

} // namespace troupe::detail
