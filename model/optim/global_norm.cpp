// The exact sum of squares and the clip factor of clipping by global norm.
#include "model/optim/global_norm.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "model/check.hpp"

namespace troupe::detail {

void square_sum::add_block(double block_sum) {
  if (!std::isfinite(block_sum)) {
    non_finite = true;
    return;
  }
  if (block_sum == 0.0)
    return;
  // block_sum = mantissa * 2^exponent, read from its bits: it is a normal
  // double (at least 2^-298, the square of the smallest subnormal float).
  uint64_t bits = 0;
  std::memcpy(&bits, &block_sum, sizeof bits);
  const int biased = static_cast<int>((bits >> 52) & 0x7ff);
  TROUPE_ASSERT(biased > 0);
  const uint64_t mantissa = (bits & ((uint64_t{1} << 52) - 1)) | (uint64_t{1} << 52);
  const int position = biased - 1075 - lowest_bit; // 2^(biased - 1075) is the mantissa's unit
  TROUPE_ASSERT(position >= 0);
  const auto limb = static_cast<size_t>(position / 32);
  TROUPE_ASSERT(limb + 2 < limb_count);
  // mantissa * 2^shift spans up to 85 bits: the low 64 of the shift, and
  // what it pushed out at the top.
  const int shift = position % 32;
  const uint64_t low = mantissa << shift;
  limbs[limb] += low & 0xffffffffu;
  limbs[limb + 1] += low >> 32;
  limbs[limb + 2] += shift == 0 ? 0 : mantissa >> (64 - shift);
}

void square_sum::add_squares(const float* values, size_t count) {
  // Within a block, four interleaved sums (element i goes to lane i % 4),
  // then (lane 0 + lane 1) + (lane 2 + lane 3): a fixed order that does not
  // wait on one long chain of additions.
  for (size_t begin = 0; begin < count; begin += norm_block) {
    const size_t size = std::min(count - begin, norm_block);
    const float* x = values + begin;
    double lane[4] = {0.0, 0.0, 0.0, 0.0};
    if (size == norm_block) { // the same order, unrolled
      for (size_t i = 0; i < norm_block; i += 4)
        for (size_t l = 0; l < 4; ++l)
          lane[l] += static_cast<double>(x[i + l]) * static_cast<double>(x[i + l]);
    } else {
      for (size_t i = 0; i < size; ++i)
        lane[i % 4] += static_cast<double>(x[i]) * static_cast<double>(x[i]); // exact square
    }
    add_block((lane[0] + lane[1]) + (lane[2] + lane[3]));
  }
}

void square_sum::add(const square_sum& other) {
  for (size_t i = 0; i < limb_count; ++i)
    limbs[i] += other.limbs[i];
  non_finite = non_finite || other.non_finite;
}

double square_sum::total() const {
  if (non_finite)
    return HUGE_VAL;
  // Carries first, so the value has one spelling; then the limbs from the
  // top, a deterministic rounding of the exact value.
  std::array<uint64_t, limb_count> carried = limbs;
  for (size_t i = 0; i + 1 < limb_count; ++i) {
    carried[i + 1] += carried[i] >> 32;
    carried[i] &= 0xffffffffu;
  }
  double sum = 0.0;
  for (size_t i = limb_count; i-- > 0;)
    sum += std::ldexp(static_cast<double>(carried[i]), lowest_bit + 32 * static_cast<int>(i));
  return sum;
}

double square_sum::norm() const {
  return std::sqrt(total());
}

square_sum sum_of_squares(const float* values, size_t count) {
  square_sum sum;
  sum.add_squares(values, count);
  return sum;
}

float global_clip_scale(double norm, float clipnorm) {
  if (clipnorm <= 0.0f)
    return 1.0f;
  const double clip = clipnorm;
  return static_cast<float>(clip / std::max(norm, clip));
}

void scale_gradient(float* gradient, size_t count, float scale) {
  if (scale == 1.0f)
    return;
  for (size_t i = 0; i < count; ++i)
    gradient[i] *= scale;
}

double clip_by_global_norm(float* gradient, size_t count, float clipnorm) {
  const double norm = sum_of_squares(gradient, count).norm();
  scale_gradient(gradient, count, global_clip_scale(norm, clipnorm));
  return norm;
}

} // namespace troupe::detail
