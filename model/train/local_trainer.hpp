// Single-process training: one network, one optimizer, the whole batch on one
// backend. It is the reference the actor runtime's one-replica case matches.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "model/backend/backend.hpp"
#include "model/data/dataset.hpp"
#include "model/network.hpp"
#include "model/optim/optimizer.hpp"

namespace troupe::detail {

/// Sums one epoch of training: its batch stats and the time the loop took.
struct epoch_report {
  batch_stats train;
  double seconds = 0;
  size_t steps = 0;
};

/// Trains a model_spec with Keras-style fit semantics: a seeded shuffle per
/// epoch, batches of batch_size with the last partial batch kept.
class local_trainer {
public:
  /// Builds the network on `compute` and initialises the parameters from seed.
  static expected<local_trainer> make(const model_spec& spec, backend& compute,
                                      const optimizer_config& optimizer,
                                      uint64_t seed, size_t batch_size);

  /// Runs one epoch over `train` (epoch numbers start at 0).
  epoch_report run_epoch(const dataset& train, uint64_t epoch);

  /// Evaluates the current parameters over a whole dataset.
  batch_stats evaluate(const dataset& data);

  const std::vector<float>& parameters() const { return params_; }

private:
  local_trainer(const model_spec& spec, backend& compute,
                std::unique_ptr<optimizer> optim, float global_clipnorm, uint64_t seed,
                size_t batch_size);

  std::unique_ptr<network> net_;
  std::unique_ptr<optimizer> optimizer_;
  float global_clipnorm_; // 0: no clipping
  uint64_t seed_;
  size_t batch_size_;
  std::vector<float> params_;
  std::vector<float> gradient_;
  std::vector<float> batch_images_;
  std::vector<int32_t> batch_labels_;
};

} // namespace troupe::detail
