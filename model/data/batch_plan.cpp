// Epoch permutations and the round/replica split of an epoch; all of it a pure
// function of (samples, seed, epoch), so every node computes the same plan.
#include "model/data/batch_plan.hpp"

#include <algorithm>
#include "model/check.hpp"

#include "model/random.hpp"

namespace troupe::detail {

std::vector<uint32_t> epoch_permutation(size_t samples, uint64_t seed, uint64_t epoch) {
  TROUPE_ASSERT(samples <= (size_t{1} << 32));
  std::vector<uint32_t> perm(samples);
  for (size_t i = 0; i < samples; ++i)
    perm[i] = static_cast<uint32_t>(i);
  // Fisher-Yates by hand: std::shuffle and std distributions differ between
  // standard libraries, and the plan must match on every node.
  random_stream rng(mix_seed(seed, epoch));
  for (size_t i = samples; i > 1; --i) {
    size_t j = static_cast<size_t>(rng.below(i));
    std::swap(perm[i - 1], perm[j]);
  }
  return perm;
}

batch_plan::batch_plan(size_t samples, size_t global_batch, size_t replicas)
  : samples_(samples), global_batch_(global_batch), replicas_(replicas) {
  TROUPE_ASSERT(global_batch > 0);
  TROUPE_ASSERT(replicas > 0);
}

size_t batch_plan::rounds() const {
  return (samples_ + global_batch_ - 1) / global_batch_;
}

size_t batch_plan::round_size(size_t round) const {
  TROUPE_ASSERT(round < rounds());
  return std::min(global_batch_, samples_ - round * global_batch_);
}

batch_slice split_round(size_t round_size, size_t members, size_t index) {
  TROUPE_ASSERT(index < members);
  const size_t share = round_size / members;
  const size_t extra = round_size % members;
  batch_slice result;
  result.begin = index * share + std::min(index, extra);
  result.size = share + (index < extra ? 1 : 0);
  return result;
}

batch_slice batch_plan::slice(size_t round, size_t replica) const {
  TROUPE_ASSERT(replica < replicas_);
  auto result = split_round(round_size(round), replicas_, replica);
  result.begin += round * global_batch_;
  return result;
}

} // namespace troupe::detail
