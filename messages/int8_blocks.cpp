// Block-scaled int8 quantization, without rounding-mode or flush-to-zero
// dependence in the rounding to an integer: floor and an exact remainder.
#include "messages/int8_blocks.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace troupe::detail {

namespace {

// Calls `each(begin, end)` for the parts of [first, first + count) (global
// indices) that fall in one block each, as offsets from `first`.
template <class Each>
void for_each_block(uint64_t first, size_t count, Each each) {
  size_t begin = 0;
  while (begin < count) {
    const uint64_t index = first + begin;
    const size_t in_block = int8_block_size - static_cast<size_t>(index % int8_block_size);
    const size_t end = std::min(count, begin + in_block);
    each(begin, end);
    begin = end;
  }
}

} // namespace

size_t int8_blocks_spanned(uint64_t first, size_t count) {
  if (count == 0)
    return 0;
  return static_cast<size_t>((first + count - 1) / int8_block_size - first / int8_block_size + 1);
}

float int8_scale(const float* x, size_t count) {
  // On the bits without the sign, floats order as unsigned integers, and
  // every NaN lies above Inf: one max, which vectorizes.
  uint32_t largest = 0;
  for (size_t i = 0; i < count; ++i) {
    uint32_t bits = 0;
    std::memcpy(&bits, x + i, sizeof(bits));
    bits &= 0x7FFFFFFFu;
    largest = bits > largest ? bits : largest;
  }
  if (largest > 0x7F800000u)
    return std::numeric_limits<float>::quiet_NaN();
  float magnitude = 0;
  std::memcpy(&magnitude, &largest, sizeof(magnitude));
  return magnitude / 127.0f; // Inf stays Inf
}

namespace {

// int8_of for a scale that is finite and positive and values that are
// finite (those of the scale's block), in float arithmetic without branches:
// it vectorizes.
inline int8_t int8_of_finite(float x, float scale) {
  // A block's largest value may divide to a hair over 127, and a scale that
  // underflowed to a subnormal to far more: clamp before rounding.
  float y = x / scale;
  y = y < -127.0f ? -127.0f : y;
  y = y > 127.0f ? 127.0f : y;
  const float below = std::floor(y);
  const float rest = y - below;                            // exact: |y| <= 127
  const float odd = below - 2.0f * std::floor(0.5f * below); // 0 or 1, exact
  const int up =
    static_cast<int>(rest > 0.5f) | (static_cast<int>(rest == 0.5f) & static_cast<int>(odd));
  return static_cast<int8_t>(static_cast<int>(below) + up);
}

// One block's values, in one clone per vector width picked at load time
// (the portable baseline has no vector floor). The same float operations in
// each, so the same bits. Local: an ifunc symbol with external linkage is
// exported whatever its visibility says.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
void quantize_block_clones(const float* x, size_t count, float scale, int8_t* out) {
  for (size_t i = 0; i < count; ++i)
    out[i] = int8_of_finite(x[i], scale);
}

} // namespace

int8_t int8_of(float x, float scale) {
  if (!(scale > 0.0f) || !std::isfinite(scale) || !std::isfinite(x))
    return 0;
  return int8_of_finite(x, scale);
}

int8_values quantize_int8(const float* x, size_t count, uint64_t first) {
  int8_values q;
  q.first = first;
  q.values.resize(count);
  q.scales.reserve(int8_blocks_spanned(first, count));
  for_each_block(first, count, [&](size_t begin, size_t end) {
    const float scale = int8_scale(x + begin, end - begin);
    q.scales.push_back(scale);
    if (scale > 0.0f && std::isfinite(scale)) // else zeros, as resized
      quantize_block_clones(x + begin, end - begin, scale, q.values.data() + begin);
  });
  return q;
}

void dequantize_int8(const int8_values& q, size_t from, size_t count, float* to) {
  for_each_block(q.first + from, count, [&](size_t begin, size_t end) {
    const float scale = q.scale_of(from + begin);
    for (size_t i = begin; i < end; ++i)
      to[i] = float_of_int8(q.values[from + i], scale);
  });
}

int8_values quantize_with_feedback(float* gradient, float* residual, size_t count) {
  return quantize_with_feedback(gradient, residual, residual, count);
}

int8_values quantize_with_feedback(float* gradient, const float* residual_in,
                                   float* residual_out, size_t count) {
  for (size_t i = 0; i < count; ++i)
    gradient[i] += residual_in[i];
  int8_values q = quantize_int8(gradient, count, 0);
  for_each_block(0, count, [&](size_t begin, size_t end) {
    const float scale = q.scales[begin / int8_block_size];
    const bool finite = std::isfinite(scale);
    for (size_t i = begin; i < end; ++i) {
      const float stands_for = float_of_int8(q.values[i], scale);
      residual_out[i] = finite ? gradient[i] - stands_for : 0.0f;
      gradient[i] = stands_for;
    }
  });
  return q;
}

std::string int8_fault(const int8_values& q, size_t count) {
  if (q.values.size() != count)
    return std::to_string(q.values.size()) + " bytes for " + std::to_string(count)
           + " int8 values";
  const size_t blocks = int8_blocks_spanned(q.first, count);
  if (q.scales.size() != blocks)
    return std::to_string(q.scales.size()) + " scales for " + std::to_string(count)
           + " int8 values from parameter " + std::to_string(q.first) + " (" + std::to_string(blocks)
           + " blocks)";
  for (size_t b = 0; b < blocks; ++b)
    if (!std::isfinite(q.scales[b]) || q.scales[b] < 0.0f)
      return "the scale of block " + std::to_string(q.first / int8_block_size + b) + " is "
             + std::to_string(q.scales[b]) + ", not a finite magnitude";
  for (size_t i = 0; i < count; ++i)
    if (q.values[i] == std::numeric_limits<int8_t>::min())
      return "value " + std::to_string(q.first + i) + " is -128, outside [-127, 127]";
  return {};
}

} // namespace troupe::detail
