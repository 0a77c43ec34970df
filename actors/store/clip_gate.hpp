// Clipping by global norm in a store shard under a policy with rounds: the
// round's step waits until every shard's sum of squares of its slice of the
// round's gradient is in, and whatever the policy asks of the store after
// it waits too, in order. Plain C++: the actor sends and receives the sums.
//
//   idle --step()--> waiting --heard() completes the round--> drain: the step,
//     ^                 |  defer(): queued behind it            then what waited
//     +-----------------+---------------------------------------------+
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <vector>

#include "model/optim/global_norm.hpp"

namespace troupe::detail {

/// Holds one shard's clipped steps until their rounds' global norms are
/// known, and the store's other calls behind them; with one shard a step
/// runs at once. Every shard adds the same sums exactly (square_sum), so
/// every shard gets the same norm, whatever the number of shards.
class clip_gate {
public:
  /// Steps with the clipped gradient (the shard's slice, in place).
  using step_fn = std::function<void(float* gradient)>;

  /// A gate for shard `shard` of `shards`, clipping at `clipnorm` (> 0).
  clip_gate(uint32_t shard, uint32_t shards, float clipnorm);

  /// Tells whether a step waits for a norm: the store's calls wait then too.
  bool busy() const { return !queue_.empty(); }

  /// Queues the step of store round `round` with this shard's slice of its
  /// gradient, whose own sum of squares is `own`; runs it at once when the
  /// round's sums are all in (with one shard: always). Returns `own` for
  /// the actor to send to the siblings.
  void step(uint64_t round, std::vector<float> gradient, const square_sum& own, step_fn run);

  /// Returns a buffer of `count` floats for a round's gradient (the one the
  /// last step used, when it is free: no allocation per round).
  std::vector<float> buffer(size_t count);

  /// Runs `op` after the steps that wait, or now when none does.
  void in_order(std::function<void()> op);

  /// Adds sibling `shard`'s sum of round `round`; runs what it completes.
  /// False when it is not a sibling's, or the second one of that shard.
  bool heard(uint64_t round, uint32_t shard, const square_sum& sum);

  /// Returns the round of the first step that waits for its norm (busy() only).
  uint64_t waiting_round() const;

  /// Returns the global norm of the last step that ran (for tests and stats).
  double last_norm() const { return last_norm_; }

private:
  struct round_sums {
    square_sum sum;
    std::vector<bool> heard; // by shard
    uint32_t count = 0;
  };
  struct entry {
    std::optional<uint64_t> round; // a step waits for this round's sums
    std::vector<float> gradient;
    step_fn run;
    std::function<void()> op; // else a call that waits behind the steps
  };

  round_sums& sums_of(uint64_t round);
  bool complete(uint64_t round) const;
  void drain();

  uint32_t shard_;
  uint32_t shards_;
  float clipnorm_;
  std::map<uint64_t, round_sums> rounds_;
  std::deque<entry> queue_;
  std::vector<float> spare_;
  bool draining_ = false;
  double last_norm_ = 0;
};

} // namespace troupe::detail
