// The round/replica split of one epoch under a changing membership: when a
// replica dies mid-epoch, its unprocessed work goes to the survivors, so every
// sample of the epoch is still trained on exactly once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace troupe::detail {

/// Splits an epoch into rounds of `global_batch` positions of the epoch
/// permutation and each round among the live replicas, like batch_plan: the
/// L live replicas, in ascending index order, get b / L positions each, plus
/// one for the first b % L. A loss re-plans the rounds after it over the
/// survivors. With live = {0, .., R-1} and no loss it equals batch_plan.
class epoch_schedule {
public:
  /// Plans an epoch of `samples` positions for the replicas in `live`
  /// (strictly ascending, not necessarily contiguous, e.g. {0, 2, 3}).
  epoch_schedule(size_t samples, size_t global_batch, std::vector<uint32_t> live);

  size_t samples() const { return samples_; }
  size_t global_batch() const { return global_batch_; }
  /// Returns the number of rounds as currently planned.
  size_t rounds() const;
  /// Returns the number of positions in round `round` across all its replicas.
  size_t round_size(size_t round) const;
  /// Returns the replicas that round `round` was planned for (a replica lost
  /// during that round is still among them).
  const std::vector<uint32_t>& live(size_t round) const;
  /// Returns the positions (indices into the epoch permutation) that `replica`
  /// trains on in round `round`; empty if it has no share or is not live then.
  std::vector<uint32_t> positions(size_t round, uint32_t replica) const;
  /// Records that `replica` died during round `round`. Rounds up to `round`
  /// stay as planned; from round + 1 on, the remaining work (the lost share of
  /// `round` unless `share_used`, then every later position, in order) is
  /// re-split over the survivors. Losses must come in non-decreasing round
  /// order; several in one round compose.
  void lose(size_t round, uint32_t replica, bool share_used);

  friend bool operator==(const epoch_schedule& a, const epoch_schedule& b);
  friend bool operator!=(const epoch_schedule& a, const epoch_schedule& b) { return !(a == b); }

private:
  // Rounds [first_round, first_round + ceil(positions / global_batch)) split
  // over one membership.
  struct segment {
    size_t first_round = 0;
    std::vector<uint32_t> live;
    std::vector<uint32_t> positions;
  };

  size_t segment_rounds(const segment& s) const;
  const segment& segment_of(size_t round) const;

  size_t samples_;
  size_t global_batch_;
  std::vector<segment> segments_; // by first_round, contiguous
};

} // namespace troupe::detail
