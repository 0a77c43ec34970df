// Which samples each replica trains on in each round of an epoch. Everything is
// derived from (seed, epoch, replica), so sample data never travels.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace troupe::detail {

/// Returns a permutation of [0, samples) for one epoch (Fisher-Yates with
/// troupe::detail::random_stream seeded from seed and epoch): the same on every node.
std::vector<uint32_t> epoch_permutation(size_t samples, uint64_t seed, uint64_t epoch);

/// Names a range of positions in the epoch permutation.
struct batch_slice {
  size_t begin = 0;
  size_t size = 0;
};

/// Returns member `index`'s part of a round of `round_size` samples split over
/// `members`: round_size / members each, plus one for the first
/// round_size % members, in member order; `begin` counts from the round's start.
batch_slice split_round(size_t round_size, size_t members, size_t index);

/// Splits an epoch into rounds of `global_batch` samples (the last round keeps
/// the remainder, as Keras fit does) and each round among `replicas`: replica r
/// gets b / R samples, plus one if r < b % R, in replica order. A replica may
/// get 0 samples in a short last round; it still takes part in the round.
class batch_plan {
public:
  batch_plan(size_t samples, size_t global_batch, size_t replicas);

  size_t samples() const { return samples_; }
  size_t global_batch() const { return global_batch_; }
  size_t replicas() const { return replicas_; }
  /// Returns ceil(samples / global_batch).
  size_t rounds() const;
  /// Returns the number of samples in round `round` across all replicas.
  size_t round_size(size_t round) const;
  /// Returns replica `replica`'s positions in round `round`.
  batch_slice slice(size_t round, size_t replica) const;

private:
  size_t samples_;
  size_t global_batch_;
  size_t replicas_;
};

} // namespace troupe::detail
