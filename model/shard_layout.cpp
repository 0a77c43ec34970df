// The shard split and the optimizer-state slicing.
#include "model/shard_layout.hpp"

#include <algorithm>
#include <string>

#include "model/check.hpp"

namespace troupe::detail {

expected<std::vector<shard_range>> split_into_shards(size_t parameter_count, size_t shards) {
  if (shards == 0)
    return fail(errc::invalid_argument, "a store needs at least one shard");
  if (shards > 1 && parameter_count < shards * shard_alignment)
    return fail(errc::invalid_argument,
                std::to_string(shards) + " store shards are too many for "
                  + std::to_string(parameter_count) + " parameters (at most "
                  + std::to_string(std::max<size_t>(1, parameter_count / shard_alignment))
                  + ": each shard needs " + std::to_string(shard_alignment) + ")");
  std::vector<shard_range> ranges(shards);
  size_t start = 0;
  for (size_t k = 0; k < shards; ++k) {
    const size_t end = k + 1 == shards ? parameter_count
                                       : (k + 1) * parameter_count / shards
                                           / shard_alignment * shard_alignment;
    ranges[k] = shard_range{start, end - start};
    start = end;
  }
  return ranges;
}

std::vector<float> slice_optimizer_state(const float* state, size_t state_size,
                                         size_t parameter_count, shard_range range) {
  TROUPE_ASSERT(parameter_count > 0 && state_size % parameter_count == 0);
  const size_t planes = state_size / parameter_count;
  std::vector<float> part(planes * range.count);
  for (size_t p = 0; p < planes; ++p)
    std::copy_n(state + p * parameter_count + range.offset, range.count,
                part.data() + p * range.count);
  return part;
}

void place_optimizer_state(const float* part, size_t part_size, size_t parameter_count,
                           shard_range range, float* state) {
  TROUPE_ASSERT(range.count > 0 && part_size % range.count == 0);
  const size_t planes = part_size / range.count;
  for (size_t p = 0; p < planes; ++p)
    std::copy_n(part + p * range.count, range.count,
                state + p * parameter_count + range.offset);
}

} // namespace troupe::detail
