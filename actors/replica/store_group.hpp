// A run's store as its users see it: S shard actors in shard order, the
// ranges of the flat buffer they own, and how their answers and stats add up
// to the whole store's.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "messages/interfaces.hpp"
#include "common/expected.hpp"
#include "model/shard_layout.hpp"

namespace troupe::detail {

/// Holds the shards of a run's store in shard order and the ranges they own.
struct store_group {
  std::vector<store_actor> shards;
  std::vector<shard_range> ranges;
  size_t parameter_count = 0;
  // Where pushes to each shard go: the shard, or a lane to its process
  // (actors/cluster/host_lanes.hpp); empty: to the shards.
  std::vector<store_actor> push_routes;

  /// Returns where a push to shard `k` goes.
  const store_actor& push_route(size_t k) const {
    return push_routes.empty() ? shards[k] : push_routes[k];
  }
};

/// Joins the shards' answers (in shard order) into one params_msg over the
/// whole flat buffer: version, round and losses are shard 0's. Without a
/// copy when every slice sits at its own position of one whole buffer (sync
/// shards of one process, or one shard); else the slices are copied into
/// `scratch`, which is reused when no one else holds it. `copy_always` copies
/// even then, for a caller that keeps the values while shards step. Answers
/// in device memory are not joined here: a replica that hands over on a
/// device copies them there (actors/replica/device_step.hpp).
params_msg join_params(std::vector<params_msg>& parts, size_t parameter_count,
                       std::shared_ptr<std::vector<float>>& scratch, bool copy_always = false);

/// Makes `scratch` a buffer of `parameter_count` floats that only its
/// holder holds: a new one when someone else holds it, or with `fresh`.
/// Returns true when it made a new one (the values there are gone).
bool make_join_buffer(std::shared_ptr<std::vector<float>>& scratch, size_t parameter_count,
                      bool fresh = false);

/// Copies `part`'s values into `joined` (make_join_buffer's, of every
/// parameter) at their place: as each shard's answer comes, for a replica
/// whose shards are not all in its process.
void join_part(const params_msg& part, std::vector<float>& joined);

/// Names the parameters a slice of a join buffer holds: the version and the
/// membership epoch of the shard that answered with them (a healed store's
/// new shards count versions again).
struct slice_version {
  uint64_t version = 0;
  uint64_t membership = 0;
};

/// Joins `part` into `joined` as join_part does, or applies its delta to
/// the slice there, which must hold the delta's base (`held`). Returns what
/// was wrong, or nothing; `held` then names what the slice holds.
std::string join_answer(const params_msg& part, std::vector<float>& joined,
                        std::optional<slice_version>& held);

/// Returns the answers as one params_msg over `values` (which join_part
/// filled with every part): version, round and losses are shard 0's.
params_msg joined_in(std::vector<params_msg>& parts,
                     std::shared_ptr<const std::vector<float>> values);

/// Adds the shards' stats up to the store's: pushes and samples as shard 0
/// counts them (every push reaches every shard), rejections and staleness
/// over all shards' gradient slices, the longest apply time (shards apply in
/// parallel) and the fewest live replicas. No trace spans: those stay with
/// their shard.
store_stats combine_shard_stats(const std::vector<store_stats>& shards);

/// Chooses the number of store shards when --store-shards is 0: one per
/// store node when shards run on nodes; one when they step on a GPU
/// (`on_device`: one launch steps the whole buffer, and a replica copies one
/// slice a step); otherwise one per replica, at most one per core
/// of this machine (`cores`) — replicas wait while the store works, so its
/// shards take the replicas' cores in that time.
uint32_t default_store_shards(uint32_t replicas, unsigned cores, size_t store_nodes,
                              bool on_device = false);

} // namespace troupe::detail
