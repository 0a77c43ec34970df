// How a sharded store splits the flat parameter buffer: S contiguous ranges,
// as even as 64-byte alignment allows, and the optimizer state that goes with
// each range. Checkpoints hold the whole buffer, so any S can resume any file.
#pragma once

#include <cstddef>
#include <vector>

#include "common/expected.hpp"

namespace troupe::detail {

/// Locates one shard's part of the flat buffer.
struct shard_range {
  size_t offset = 0;
  size_t count = 0;
};

/// Floats per 64-byte cache line: every shard but the last starts and ends on one.
constexpr size_t shard_alignment = 16;

/// Splits `parameter_count` floats into `shards` ranges in order: shard k
/// starts at k * parameter_count / shards rounded down to shard_alignment, so
/// sizes differ by less than 2 * shard_alignment. Fails when one of several shards
/// would get fewer than shard_alignment floats, or `shards` is 0.
expected<std::vector<shard_range>> split_into_shards(size_t parameter_count, size_t shards);

/// Cuts one range out of a whole optimizer state. An optimizer's state is
/// planes of one float per parameter (Adam: m then v; SGD with momentum: the
/// velocity; plain SGD: none), so its range is the same slice of each plane.
/// `state` holds planes x parameter_count floats.
std::vector<float> slice_optimizer_state(const float* state, size_t state_size,
                                         size_t parameter_count, shard_range range);

/// Writes one range's optimizer state (planes x range.count floats) into the
/// whole state (planes x parameter_count floats): the inverse of
/// slice_optimizer_state.
void place_optimizer_state(const float* part, size_t part_size, size_t parameter_count,
                           shard_range range, float* state);

} // namespace troupe::detail
