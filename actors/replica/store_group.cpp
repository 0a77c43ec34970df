// Joining shard answers and stats.
#include "actors/replica/store_group.hpp"

#include <algorithm>
#include <cstring>

namespace troupe::detail {

namespace {

// True if the slices tile one whole buffer at their own positions, in order.
bool views_of_one_buffer(const std::vector<params_msg>& parts, size_t parameter_count) {
  const auto& buffer = parts.front().values.buffer;
  if (!buffer)
    return false;
  size_t end = 0;
  for (const auto& part : parts) {
    if (part.values.buffer != buffer || part.values.offset != part.offset
        || part.offset != end)
      return false;
    end += part.values.size();
  }
  return end == parameter_count;
}

} // namespace

bool make_join_buffer(std::shared_ptr<std::vector<float>>& scratch, size_t parameter_count,
                      bool fresh) {
  const bool made = !scratch || scratch.use_count() > 1 || fresh
                    || scratch->size() != parameter_count;
  if (made)
    scratch = std::make_shared<std::vector<float>>(parameter_count);
  return made;
}

void join_part(const params_msg& part, std::vector<float>& joined) {
  const size_t parameter_count = joined.size();
  const size_t count = std::min(part.values.size(),
                                parameter_count - std::min<size_t>(part.offset, parameter_count));
  if (count > 0)
    std::memcpy(joined.data() + part.offset, part.values.data(), count * sizeof(float));
}

std::string join_answer(const params_msg& part, std::vector<float>& joined,
                        std::optional<slice_version>& held) {
  const slice_version now{part.version, part.membership};
  if (!part.delta) {
    join_part(part, joined);
    held = part.values.size() > 0 ? std::optional<slice_version>{now} : std::nullopt;
    return {};
  }
  const auto& delta = part.delta;
  if (!held || held->version != delta.base_version || held->membership != part.membership)
    return "coded against version " + std::to_string(delta.base_version)
           + (held ? ", the replica holds " + std::to_string(held->version)
                   : ", the replica holds none");
  if (part.offset > joined.size() || delta.count > joined.size() - part.offset)
    return "a delta of " + std::to_string(delta.count) + " values from "
           + std::to_string(part.offset) + " for " + std::to_string(joined.size())
           + " parameters";
  auto fault = apply_delta(delta, joined.data() + part.offset, delta.count);
  held = fault.empty() ? std::optional<slice_version>{now} : std::nullopt;
  return fault;
}

params_msg joined_in(std::vector<params_msg>& parts,
                     std::shared_ptr<const std::vector<float>> values) {
  params_msg joined;
  if (parts.empty())
    return joined;
  joined.version = parts.front().version;
  joined.round = parts.front().round;
  joined.staleness = parts.front().staleness;
  joined.losses = std::move(parts.front().losses);
  joined.membership = parts.front().membership;
  joined.values = shared_floats{std::move(values)};
  return joined;
}

params_msg join_params(std::vector<params_msg>& parts, size_t parameter_count,
                       std::shared_ptr<std::vector<float>>& scratch, bool copy_always) {
  if (parts.empty())
    return params_msg{};
  if (!copy_always && views_of_one_buffer(parts, parameter_count)) {
    auto whole = parts.front().values.buffer;
    auto joined = joined_in(parts, nullptr);
    joined.values = shared_floats{std::move(whole), 0, parameter_count};
    return joined;
  }
  make_join_buffer(scratch, parameter_count, copy_always);
  for (const auto& part : parts)
    join_part(part, *scratch);
  return joined_in(parts, scratch);
}

store_stats combine_shard_stats(const std::vector<store_stats>& shards) {
  store_stats all;
  if (shards.empty())
    return all;
  all = shards.front();
  all.trace.clear(); // spans belong to their shard's track, not to the sum
  for (size_t k = 1; k < shards.size(); ++k) {
    const auto& s = shards[k];
    all.rejected += s.rejected;
    all.dropped = std::max(all.dropped, s.dropped);
    all.fenced += s.fenced;
    all.apply_seconds = std::max(all.apply_seconds, s.apply_seconds);
    all.staleness_sum += s.staleness_sum;
    all.staleness_count += s.staleness_count;
    all.staleness_max = std::max(all.staleness_max, s.staleness_max);
    all.live_replicas = std::min(all.live_replicas, s.live_replicas);
  }
  return all;
}

uint32_t default_store_shards(uint32_t replicas, unsigned cores, size_t store_nodes,
                              bool on_device) {
  if (store_nodes > 0)
    return static_cast<uint32_t>(store_nodes);
  if (on_device)
    return 1;
  return std::max(1u, std::min(replicas, std::max(1u, cores)));
}

} // namespace troupe::detail
