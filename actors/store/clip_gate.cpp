// The order of a shard's clipped steps and the calls that wait behind them.
#include "actors/store/clip_gate.hpp"

#include <utility>

#include "model/check.hpp"

namespace troupe::detail {

clip_gate::clip_gate(uint32_t shard, uint32_t shards, float clipnorm)
  : shard_(shard), shards_(shards), clipnorm_(clipnorm) {
  TROUPE_ASSERT(shard < shards && clipnorm > 0.0f);
}

clip_gate::round_sums& clip_gate::sums_of(uint64_t round) {
  auto& sums = rounds_[round];
  if (sums.heard.empty())
    sums.heard.assign(shards_, false);
  return sums;
}

bool clip_gate::complete(uint64_t round) const {
  const auto found = rounds_.find(round);
  return found != rounds_.end() && found->second.count == shards_;
}

void clip_gate::step(uint64_t round, std::vector<float> gradient, const square_sum& own,
                     step_fn run) {
  auto& sums = sums_of(round);
  TROUPE_ASSERT(!sums.heard[shard_]); // one step per round
  sums.heard[shard_] = true;
  ++sums.count;
  sums.sum.add(own);
  entry e;
  e.round = round;
  e.gradient = std::move(gradient);
  e.run = std::move(run);
  queue_.push_back(std::move(e));
  drain();
}

uint64_t clip_gate::waiting_round() const {
  for (const auto& e : queue_)
    if (e.round)
      return *e.round;
  TROUPE_ASSERT(false && "no step waits");
  return 0;
}

std::vector<float> clip_gate::buffer(size_t count) {
  std::vector<float> out = std::move(spare_);
  spare_ = std::vector<float>{};
  out.resize(count);
  return out;
}

void clip_gate::in_order(std::function<void()> op) {
  if (!busy()) {
    op();
    return;
  }
  entry e;
  e.op = std::move(op);
  queue_.push_back(std::move(e));
}

bool clip_gate::heard(uint64_t round, uint32_t shard, const square_sum& sum) {
  if (shard >= shards_ || shard == shard_)
    return false;
  auto& sums = sums_of(round);
  if (sums.heard[shard])
    return false;
  sums.heard[shard] = true;
  ++sums.count;
  sums.sum.add(sum);
  drain();
  return true;
}

void clip_gate::drain() {
  if (draining_) // a call run below queued more: the loop takes it
    return;
  draining_ = true;
  while (!queue_.empty()) {
    auto& front = queue_.front();
    if (front.round && !complete(*front.round))
      break;
    entry e = std::move(front);
    queue_.pop_front();
    if (e.round) {
      last_norm_ = rounds_[*e.round].sum.norm();
      rounds_.erase(*e.round);
      scale_gradient(e.gradient.data(), e.gradient.size(),
                     global_clip_scale(last_norm_, clipnorm_));
      e.run(e.gradient.data());
      spare_ = std::move(e.gradient);
    } else {
      e.op();
    }
  }
  draining_ = false;
}

} // namespace troupe::detail
