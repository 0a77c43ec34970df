// The coordinator: the fit loop. It spawns the store and the replicas, runs the
// epochs, evaluates on the test set after each one and shuts everything down.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <caf/expected.hpp>
#include <caf/fwd.hpp>

#include "actors/fit_options.hpp"
#include "messages/protocol.hpp"
#include "model/data/dataset.hpp"

namespace troupe {

/// Sums one epoch for progress lines and metrics.
struct epoch_record {
  uint32_t epoch = 0; // 1-based, as Keras prints it
  double train_loss = 0;
  double train_accuracy = 0;
  double test_loss = 0;
  double test_accuracy = 0;
  uint64_t samples = 0;
  double seconds = 0;            // the training loop only
  double samples_per_second = 0;
  double staleness_mean = 0;
  uint64_t staleness_max = 0;
  double compute_seconds = 0;    // summed over replicas
  double wait_seconds = 0;       // summed over replicas: push to answer
  double apply_seconds = 0;      // in the store: reduce + optimizer + publish
  uint64_t pushes = 0;
  uint64_t version = 0;
  uint32_t live_replicas = 0;
};

/// Receives each epoch's record as soon as it is known.
using epoch_observer = std::function<void(const epoch_record&)>;

/// Runs a fit to the end and returns its summary, or the error that stopped
/// it. Every wait inside is bounded; nothing is left running afterwards.
caf::expected<fit_summary> fit(caf::actor_system& system, const fit_options& options,
                          std::shared_ptr<const dataset_pair> data,
                          epoch_observer observer = {});

} // namespace troupe
