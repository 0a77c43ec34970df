// Rounding to bf16 and fp16 by integer arithmetic on the bits, so the result
// does not depend on the host's rounding mode or its flushing of subnormals.
#include "messages/float_codec.hpp"

#include <cstring>

#include "messages/int8_blocks.hpp"

namespace troupe::detail {

namespace {

uint32_t bits_of(float value) {
  uint32_t bits = 0;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

float float_of(uint32_t bits) {
  float value = 0;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

// `magnitude` >> `shift`, rounded to nearest, ties to even.
uint32_t shift_to_nearest_even(uint32_t magnitude, uint32_t shift) {
  const uint32_t kept = magnitude >> shift;
  const uint32_t rest = magnitude & ((1u << shift) - 1);
  const uint32_t half = 1u << (shift - 1);
  return kept + ((rest > half || (rest == half && (kept & 1u) != 0)) ? 1u : 0u);
}

template <class Round>
void round_each(const float* from, size_t count, float* to, Round round) {
  for (size_t i = 0; i < count; ++i)
    to[i] = round(from[i]);
}

uint16_t bf16_of(uint32_t bits);

// bf16 rounding, the codec a run's every gradient and answer takes, in one
// clone per vector width picked at load time (the portable baseline alone
// gives 4-lane SSE). It is integer arithmetic on the bits, so every clone
// computes the same bits. Local: an ifunc symbol with external linkage is
// exported whatever its visibility says.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
void round_bf16_clones(const float* from, size_t count, float* to) {
  for (size_t i = 0; i < count; ++i)
    to[i] = float_of(static_cast<uint32_t>(bf16_of(bits_of(from[i]))) << 16);
}

// The bf16 nearest to the float of `bits` (ties to even); a NaN stays a
// quiet NaN of the same sign.
inline uint16_t bf16_of(uint32_t bits) {
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) // NaN: keep the sign, set the quiet bit
    return static_cast<uint16_t>((bits >> 16) | 0x0040u);
  // Adding just under half an ulp, plus the kept part's lowest bit, rounds
  // to nearest even; a carry runs into the exponent (up to Inf) as it should.
  const uint32_t rounded = bits + 0x7FFFu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(rounded >> 16);
}

} // namespace

const char* codec_name(float_codec codec) {
  switch (codec) {
    case float_codec::bf16:
      return "bf16";
    case float_codec::fp16:
      return "fp16";
    case float_codec::int8:
      return "int8";
    default:
      return "fp32";
  }
}

std::optional<float_codec> parse_float_codec(const std::string& text) {
  for (auto codec :
       {float_codec::fp32, float_codec::bf16, float_codec::fp16, float_codec::int8})
    if (text == codec_name(codec))
      return codec;
  return std::nullopt;
}

bool is_float_codec(uint8_t value) {
  return value <= static_cast<uint8_t>(float_codec::int8);
}

size_t codec_width(float_codec codec) {
  switch (codec) {
    case float_codec::fp32:
      return sizeof(float);
    case float_codec::int8:
      return sizeof(int8_t);
    default:
      return sizeof(uint16_t);
  }
}

float_codec parameter_codec(float_codec wire) {
  return wire == float_codec::int8 ? float_codec::bf16 : wire;
}

uint16_t to_bf16(float value) { return bf16_of(bits_of(value)); }

float from_bf16(uint16_t bits) {
  return float_of(static_cast<uint32_t>(bits) << 16);
}

uint16_t to_fp16(float value) {
  const uint32_t bits = bits_of(value);
  const auto sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t magnitude = bits & 0x7FFFFFFFu;
  if (magnitude > 0x7F800000u) // NaN: quiet, with the top of its payload
    return static_cast<uint16_t>(sign | 0x7E00u | ((magnitude >> 13) & 0x3FFu));
  if (magnitude >= 0x477FF000u) // 65520 and up (Inf too): past the largest half
    return static_cast<uint16_t>(sign | 0x7C00u);
  const uint32_t exponent = magnitude >> 23;
  if (exponent < 113) { // below 2^-14: a subnormal half (units of 2^-24) or zero
    const uint32_t shift = 126 - exponent;
    if (exponent == 0 || shift > 24)
      return sign;
    return static_cast<uint16_t>(
      sign | shift_to_nearest_even((magnitude & 0x7FFFFFu) | 0x800000u, shift));
  }
  // Rebias the exponent (127 -> 15) and round the mantissa's 13 low bits
  // away; a carry runs into the exponent.
  const uint32_t rebased = magnitude - (112u << 23);
  return static_cast<uint16_t>(sign | shift_to_nearest_even(rebased, 13));
}

float from_fp16(uint16_t bits) {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  const uint32_t exponent = (bits >> 10) & 0x1Fu;
  const uint32_t mantissa = bits & 0x3FFu;
  if (exponent == 0) { // zero or subnormal: mantissa x 2^-24, a normal float
    const float magnitude = static_cast<float>(mantissa) * float_of(0x33800000u);
    return float_of(sign | bits_of(magnitude));
  }
  if (exponent == 31) // Inf or NaN
    return float_of(sign | 0x7F800000u | (mantissa << 13));
  return float_of(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

void round_into(float_codec codec, const float* from, size_t count, float* to) {
  switch (codec) {
    case float_codec::bf16:
      round_bf16_clones(from, count, to);
      return;
    case float_codec::fp16:
      round_each(from, count, to, [](float v) { return from_fp16(to_fp16(v)); });
      return;
    case float_codec::int8:
      dequantize_int8(quantize_int8(from, count, 0), 0, count, to);
      return;
    default:
      if (from != to)
        std::memcpy(to, from, count * sizeof(float));
  }
}

void round_in_place(float_codec codec, float* values, size_t count) {
  round_into(codec, values, count, values);
}

void encode_16(float_codec codec, const float* from, size_t count, uint16_t* to) {
  if (codec == float_codec::fp16)
    for (size_t i = 0; i < count; ++i)
      to[i] = to_fp16(from[i]);
  else
    for (size_t i = 0; i < count; ++i)
      to[i] = to_bf16(from[i]);
}

void decode_16(float_codec codec, const uint16_t* from, size_t count, float* to) {
  if (codec == float_codec::fp16)
    for (size_t i = 0; i < count; ++i)
      to[i] = from_fp16(from[i]);
  else
    for (size_t i = 0; i < count; ++i)
      to[i] = from_bf16(from[i]);
}

} // namespace troupe::detail
