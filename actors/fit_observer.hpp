// What a running fit tells its caller: each epoch's record, and warnings about
// problems the run survives (a lost replica, a checkpoint not written).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

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
  bool staleness_reported = false; // the policy reports staleness (async): print it
  uint64_t dropped = 0;            // late gradients dropped this epoch (backup replicas)
  double compute_seconds = 0;    // summed over replicas
  double wait_seconds = 0;       // summed over replicas: push to answer
  double apply_seconds = 0;      // in the store: reduce + optimizer + publish
  uint64_t pushes = 0;
  uint64_t version = 0;
  uint32_t live_replicas = 0;
};

/// Receives each epoch's record as soon as it is known.
using epoch_observer = std::function<void(const epoch_record&)>;

/// Receives a warning as a sentence without a "warning: " prefix, e.g.
/// "replica 1 on cpu died in epoch 2: ...; continuing with 1 replicas".
using warning_observer = std::function<void(const std::string&)>;

/// Hears a fit while it runs. Either member may be empty; both are called on
/// the coordinator's thread, one call at a time. The library prints nothing:
/// a program shows what it hears (examples/mnist.cpp prints warnings to stderr).
struct fit_observer {
  epoch_observer on_epoch;
  warning_observer on_warning;
};

} // namespace troupe
