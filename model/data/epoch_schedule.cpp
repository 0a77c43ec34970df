// The epoch schedule as a list of segments, each a membership and the
// positions left to it; a loss closes one segment and opens the next.
#include "model/data/epoch_schedule.hpp"

#include <algorithm>
#include <functional>
#include <iterator>
#include <numeric>

#include "model/check.hpp"
#include "model/data/batch_plan.hpp"

namespace troupe::detail {

epoch_schedule::epoch_schedule(size_t samples, size_t global_batch, std::vector<uint32_t> live)
  : samples_(samples), global_batch_(global_batch) {
  TROUPE_ASSERT(global_batch > 0);
  TROUPE_ASSERT(!live.empty());
  TROUPE_ASSERT(std::adjacent_find(live.begin(), live.end(), std::greater_equal<uint32_t>())
                == live.end());
  TROUPE_ASSERT(samples <= (size_t{1} << 32));
  segment first;
  first.live = std::move(live);
  first.positions.resize(samples);
  std::iota(first.positions.begin(), first.positions.end(), 0u);
  segments_.push_back(std::move(first));
}

size_t epoch_schedule::segment_rounds(const segment& s) const {
  return (s.positions.size() + global_batch_ - 1) / global_batch_;
}

size_t epoch_schedule::rounds() const {
  const segment& last = segments_.back();
  return last.first_round + segment_rounds(last);
}

const epoch_schedule::segment& epoch_schedule::segment_of(size_t round) const {
  TROUPE_ASSERT(round < rounds());
  // Only the last segment can have no rounds, and it starts at rounds(), so
  // the last segment starting at or before `round` holds it.
  auto after = std::upper_bound(segments_.begin(), segments_.end(), round,
                                [](size_t r, const segment& s) { return r < s.first_round; });
  return *(after - 1);
}

size_t epoch_schedule::round_size(size_t round) const {
  const segment& s = segment_of(round);
  size_t offset = (round - s.first_round) * global_batch_;
  return std::min(global_batch_, s.positions.size() - offset);
}

const std::vector<uint32_t>& epoch_schedule::live(size_t round) const {
  return segment_of(round).live;
}

std::vector<uint32_t> epoch_schedule::positions(size_t round, uint32_t replica) const {
  const segment& s = segment_of(round);
  auto it = std::lower_bound(s.live.begin(), s.live.end(), replica);
  if (it == s.live.end() || *it != replica)
    return {};
  size_t index = static_cast<size_t>(it - s.live.begin());
  size_t offset = (round - s.first_round) * global_batch_;
  size_t b = std::min(global_batch_, s.positions.size() - offset);
  const auto share = split_round(b, s.live.size(), index);
  const size_t begin = offset + share.begin;
  return {s.positions.begin() + static_cast<std::ptrdiff_t>(begin),
          s.positions.begin() + static_cast<std::ptrdiff_t>(begin + share.size)};
}

void epoch_schedule::lose(size_t round, uint32_t replica, bool share_used) {
  TROUPE_ASSERT(round < rounds());
  // A segment starting at round + 1 is the re-plan of an earlier loss in this
  // same round; anything later would mean losses out of round order.
  TROUPE_ASSERT(segments_.back().first_round <= round + 1);
  bool replanned = segments_.back().first_round == round + 1;
  const segment& current = segment_of(round);
  const std::vector<uint32_t>& members = replanned ? segments_.back().live : current.live;
  TROUPE_ASSERT(std::binary_search(current.live.begin(), current.live.end(), replica));
  TROUPE_ASSERT(std::binary_search(members.begin(), members.end(), replica));

  segment next;
  next.first_round = round + 1;
  std::copy_if(members.begin(), members.end(), std::back_inserter(next.live),
               [replica](uint32_t r) { return r != replica; });
  // With nobody left the rest of the epoch cannot be trained; it ends here.
  if (!next.live.empty()) {
    if (!share_used)
      next.positions = positions(round, replica);
    if (replanned) {
      const auto& rest = segments_.back().positions;
      next.positions.insert(next.positions.end(), rest.begin(), rest.end());
    } else {
      size_t end_of_round = std::min(current.positions.size(),
                                     (round + 1 - current.first_round) * global_batch_);
      next.positions.insert(next.positions.end(),
                            current.positions.begin() + static_cast<std::ptrdiff_t>(end_of_round),
                            current.positions.end());
    }
  }

  if (replanned) {
    segments_.back() = std::move(next);
  } else {
    segment& closed = segments_.back();
    closed.positions.resize(
      std::min(closed.positions.size(), (round + 1 - closed.first_round) * global_batch_));
    segments_.push_back(std::move(next));
  }
}

bool operator==(const epoch_schedule& a, const epoch_schedule& b) {
  if (a.samples_ != b.samples_ || a.global_batch_ != b.global_batch_
      || a.segments_.size() != b.segments_.size())
    return false;
  for (size_t i = 0; i < a.segments_.size(); ++i) {
    const auto& x = a.segments_[i];
    const auto& y = b.segments_[i];
    if (x.first_round != y.first_round || x.live != y.live || x.positions != y.positions)
      return false;
  }
  return true;
}

} // namespace troupe::detail
