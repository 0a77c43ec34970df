// How a run's gradients and parameters travel (--wire): as fp32, rounded to
// bf16 or fp16 and sent as 16-bit values, or gradients as block-scaled int8
// (messages/int8_blocks.hpp) with parameters as bf16. The rounding is part of
// the run's math: it is applied inside one process too, so a run's bits do
// not depend on where its actors are (docs/consistency.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace troupe::detail {

/// Names the format floats are rounded to before they travel.
enum class float_codec : uint8_t {
  fp32 = 0, // as computed
  bf16 = 1, // 8 exponent bits, 7 mantissa bits: fp32's range
  fp16 = 2, // IEEE half: 5 exponent bits, 10 mantissa bits, largest 65504
  int8 = 3, // gradients: int8 with one fp32 scale per block of 256 values
};

/// Returns the codec's option text: "fp32", "bf16", "fp16" or "int8".
const char* codec_name(float_codec codec);

/// Reads an option text; nothing for an unknown one.
std::optional<float_codec> parse_float_codec(const std::string& text);

/// Tells whether `value` (off the wire) names a codec.
bool is_float_codec(uint8_t value);

/// Returns the bytes one value takes on the wire: 4, 2 or 1 (int8, whose
/// blocks' scales come on top).
size_t codec_width(float_codec codec);

/// Returns the codec the parameters shards answer with travel in under the
/// run's `wire`: bf16 for int8 (gradients only are int8), else `wire`.
float_codec parameter_codec(float_codec wire);

/// Returns the bf16 nearest to `value` (ties to even); NaN stays a quiet
/// NaN of the same sign, Inf stays Inf.
uint16_t to_bf16(float value);
/// Returns the float a bf16 stands for (exact).
float from_bf16(uint16_t bits);
/// Returns the IEEE half nearest to `value` (ties to even): magnitudes from
/// 65520 on become Inf, those below 2^-14 subnormal halves or zero; NaN
/// stays a quiet NaN of the same sign.
uint16_t to_fp16(float value);
/// Returns the float an IEEE half stands for (exact).
float from_fp16(uint16_t bits);

/// Rounds `count` floats in place to the nearest value of `codec` (fp32:
/// unchanged; int8: what their int8 form stands for, values[0] starting a
/// block, without error feedback).
void round_in_place(float_codec codec, float* values, size_t count);

/// Writes `count` floats of `from` rounded to `codec` into `to` (as
/// round_in_place).
void round_into(float_codec codec, const float* from, size_t count, float* to);

/// Writes `count` floats as 16-bit values of `codec` (bf16 or fp16).
void encode_16(float_codec codec, const float* from, size_t count, uint16_t* to);

/// Widens `count` 16-bit values of `codec` (bf16 or fp16) back to floats.
void decode_16(float_codec codec, const uint16_t* from, size_t count, float* to);

} // namespace troupe::detail
