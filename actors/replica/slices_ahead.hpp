// A replica's shards whose slices leave while its model still computes: the
// listener a model's gradient() tells (troupe::gradient_listener), which
// sends such a slice once the model has written all of it.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <vector>

#include <troupe/model.hpp>

#include "messages/float_codec.hpp"
#include "model/shard_layout.hpp"

namespace troupe::detail {

/// Which shards a replica sends their slices ahead, and how it sends one:
/// `send(k, sums)` pushes shard k its slice, rounded already, with the
/// batch's sums.
struct ahead_plan {
  std::vector<bool> shards; // by shard index
  std::function<void(size_t shard, const batch_result& sums)> send;
};

/// Follows one gradient() call into `gradient` (the shards' ranges tile
/// it): wants the planned shards' slices first, and once the model has
/// written all of one (and told the sums), rounds it to `codec` in place
/// and sends it. What it did not send is the caller's to round and push.
class slices_ahead final : public gradient_listener {
public:
  slices_ahead(const std::vector<shard_range>& ranges, const ahead_plan& plan,
               float_codec codec, float* gradient);

  std::vector<parameter_span> wanted_first() const override;
  void loss_known(const batch_result& sums) override;
  void done(parameter_span span) override;

  /// Tells whether shard k's slice has left (it is rounded then).
  bool sent(size_t k) const { return slices_[k].sent; }

private:
  // A planned shard's slice: its range, and the parts of it written so far
  // (disjoint, sorted [begin, end) pairs, merged as they come).
  struct slice {
    shard_range range;
    bool planned = false;
    bool sent = false;
    std::vector<std::pair<size_t, size_t>> written;
  };

  void add_written(slice& s, size_t begin, size_t end);
  void send_if_whole(size_t k);

  std::vector<slice> slices_;
  const ahead_plan& plan_;
  float_codec codec_;
  float* gradient_;
  std::optional<batch_result> sums_;
};

} // namespace troupe::detail
