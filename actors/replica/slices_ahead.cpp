// Sending the shards' slices a model has finished while it computes on.
#include "actors/replica/slices_ahead.hpp"

#include <algorithm>

namespace troupe::detail {

slices_ahead::slices_ahead(const std::vector<shard_range>& ranges, const ahead_plan& plan,
                           float_codec codec, float* gradient)
  : plan_(plan), codec_(codec), gradient_(gradient) {
  slices_.resize(ranges.size());
  for (size_t k = 0; k < ranges.size(); ++k) {
    slices_[k].range = ranges[k];
    slices_[k].planned = k < plan.shards.size() && plan.shards[k] && ranges[k].count > 0;
  }
}

std::vector<parameter_span> slices_ahead::wanted_first() const {
  std::vector<parameter_span> wanted;
  for (const auto& s : slices_)
    if (s.planned && !s.sent)
      wanted.push_back(parameter_span{s.range.offset, s.range.count});
  return wanted;
}

void slices_ahead::loss_known(const batch_result& sums) {
  sums_ = sums;
  for (size_t k = 0; k < slices_.size(); ++k)
    send_if_whole(k);
}

void slices_ahead::done(parameter_span span) {
  for (size_t k = 0; k < slices_.size(); ++k) {
    auto& s = slices_[k];
    if (!s.planned || s.sent)
      continue;
    const size_t begin = std::max(span.offset, s.range.offset);
    const size_t end = std::min(span.offset + span.count, s.range.offset + s.range.count);
    if (begin >= end)
      continue;
    add_written(s, begin, end);
    send_if_whole(k);
  }
}

void slices_ahead::add_written(slice& s, size_t begin, size_t end) {
  auto& parts = s.written;
  parts.emplace_back(begin, end);
  std::sort(parts.begin(), parts.end());
  size_t kept = 0;
  for (size_t i = 1; i < parts.size(); ++i) {
    if (parts[i].first <= parts[kept].second)
      parts[kept].second = std::max(parts[kept].second, parts[i].second);
    else
      parts[++kept] = parts[i];
  }
  parts.resize(kept + 1);
}

void slices_ahead::send_if_whole(size_t k) {
  auto& s = slices_[k];
  const bool whole = s.written.size() == 1 && s.written.front().first == s.range.offset
                     && s.written.front().second == s.range.offset + s.range.count;
  if (!s.planned || s.sent || !sums_ || !whole)
    return;
  round_in_place(codec_, gradient_ + s.range.offset, s.range.count);
  s.sent = true;
  plan_.send(k, *sums_);
}

} // namespace troupe::detail
