// Gradients as int8 (--wire=int8): blocks of int8_block_size consecutive
// values of a replica's whole gradient, counted from parameter 0 (so a shard's
// slice overlaps the same blocks whatever the shard count), each block with
// one fp32 scale, its largest magnitude / 127. A value x travels as
// q = x / scale rounded to nearest (ties to even) and clamped to
// [-127, 127], and stands for q * scale (docs/consistency.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace troupe::detail {

/// The values that share one scale.
constexpr size_t int8_block_size = 256;

/// Holds the int8 form of consecutive values of a gradient, the first at
/// parameter index `first`: one int8 per value and one scale per block the
/// values overlap (scales[0]: the block of `first`).
struct int8_values {
  uint64_t first = 0;
  std::vector<int8_t> values;
  std::vector<float> scales;

  /// Returns the scale of values[i].
  float scale_of(size_t i) const {
    return scales[(first + i) / int8_block_size - first / int8_block_size];
  }
};

/// Returns how many blocks the parameters [first, first + count) overlap.
size_t int8_blocks_spanned(uint64_t first, size_t count);

/// Returns the scale of the `count` values at `x`: their largest magnitude
/// / 127 (0 for zeros); NaN if one is NaN, else Inf if one is Inf.
float int8_scale(const float* x, size_t count);

/// Returns x / scale rounded to nearest, ties to even, clamped to
/// [-127, 127]; 0 where the scale is 0 or not finite, or x is not finite.
int8_t int8_of(float x, float scale);

/// Returns the float q stands for: q * scale (NaN for a scale that is not
/// finite: its block's values were not).
inline float float_of_int8(int8_t q, float scale) { return static_cast<float>(q) * scale; }

/// Quantizes `count` floats at `x`, x[0] being parameter `first`.
int8_values quantize_int8(const float* x, size_t count, uint64_t first);

/// Writes the floats values[from .. from + count) of `q` stand for to `to`.
void dequantize_int8(const int8_values& q, size_t from, size_t count, float* to);

/// Quantizes a replica's whole gradient with error feedback: x = gradient +
/// residual, q = quantize_int8(x), residual = x - (what q stands for), and
/// the gradient becomes what q stands for. A block that is not finite leaves
/// NaN in the gradient and 0 in the residual. Returns q (first: 0).
int8_values quantize_with_feedback(float* gradient, float* residual, size_t count);

/// The same, reading the residual from `residual_in` and writing the new one
/// to `residual_out` (which may be the same).
int8_values quantize_with_feedback(float* gradient, const float* residual_in,
                                   float* residual_out, size_t count);

/// Returns why `q`, read off the wire for `count` values, is malformed ("" if
/// it is not): a length other than the count, another number of scales than
/// the blocks spanned, a scale that is negative or not finite, a value of
/// -128.
std::string int8_fault(const int8_values& q, size_t count);

} // namespace troupe::detail
