// Clipping by global norm (Keras's global_clipnorm) with a sum of squares
// whose bits do not depend on how the gradient is split: squares are summed
// in double over blocks of norm_block floats aligned to absolute indices
// (in a fixed order within a block),
// and the blocks' sums are added exactly, in fixed point, so any split into
// shards on block boundaries, added in any order, gives the same total.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "model/shard_layout.hpp"

namespace troupe::detail {

/// Floats per block of the sum of squares: a shard's range starts on one
/// (split_into_shards), so a shard's blocks are blocks of the whole buffer.
constexpr size_t norm_block = shard_alignment;

/// Sums squares exactly: each block's sum (in double, in a fixed order) is
/// added into 32-bit limbs of one fixed-point number, so adding two sums,
/// in either order, gives the same bits as summing both ranges in one.
class square_sum {
public:
  /// Limbs of 32 bits from 2^-352 (below the square of the smallest
  /// subnormal float) up, with room for 2^32 blocks of the largest square.
  static constexpr size_t limb_count = 22;
  static constexpr int lowest_bit = -352;

  /// Adds the squares of `count` floats whose first one starts a block
  /// (a multiple of norm_block from the buffer's start).
  void add_squares(const float* values, size_t count);

  /// Adds another sum (of other blocks) exactly.
  void add(const square_sum& other);

  /// Returns the sum rounded to a double (+inf once a block was not finite).
  double total() const;

  /// Returns the L2 norm: the root of total().
  double norm() const;

  /// The limbs as they cross the wire (not normalized: each below 2^64 for
  /// any sum of fewer than 2^32 blocks), and whether a block was not finite.
  std::array<uint64_t, limb_count> limbs{};
  bool non_finite = false;

private:
  void add_block(double block_sum);
};

/// Returns the sum of squares of `count` floats starting at a block.
square_sum sum_of_squares(const float* values, size_t count);

/// Returns Keras's clip factor clipnorm / max(norm, clipnorm) (computed in
/// double, rounded to float): exactly 1 while the norm is at most clipnorm;
/// 1 when clipnorm is 0 (off).
float global_clip_scale(double norm, float clipnorm);

/// Multiplies `count` floats by `scale` in place (nothing when it is 1).
void scale_gradient(float* gradient, size_t count, float scale);

/// Clips a whole gradient by its global norm in place (one process, one
/// buffer): scale_gradient by global_clip_scale of its norm. Returns the norm.
double clip_by_global_norm(float* gradient, size_t count, float clipnorm);

} // namespace troupe::detail
