// Single-replica training with the whole loop resident on one backend: made
// for a GPU, where a step's dozen small kernels cost more to launch than to
// run. It computes what local_trainer computes with Adam.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "model/backend/backend.hpp"
#include "model/backend/resident_ops.hpp"
#include "model/data/dataset.hpp"
#include "model/train/local_trainer.hpp"
#include "model/network.hpp"
#include "model/optim/optimizer.hpp"

namespace troupe::detail {

/// Trains with the training set (uploaded once), parameters, gradient, Adam's
/// moments and the step counters all in the backend's memory. Per epoch only
/// the shuffled order goes up; a step copies nothing between host and device,
/// and the host waits only when it reads the epoch's stats. Every full batch
/// replays one recorded step (resident_loop_ops::record: a CUDA graph on a GPU).
/// Shuffle, batches and update are local_trainer's, so on the CPU backend the
/// two give bitwise-equal parameters.
class device_trainer {
public:
  /// Errors: a backend without resident_ops(), an optimizer other than Adam,
  /// a batch size of 0, a model that does not fit the data.
  static expected<std::unique_ptr<device_trainer>>
  make(const model_spec& spec, backend& compute, const dataset& train,
       const optimizer_config& optimizer, uint64_t seed, size_t batch_size,
       bool record_steps = true);

  // The recorded step points at this object's buffers: it stays where it is.
  device_trainer(const device_trainer&) = delete;
  device_trainer& operator=(const device_trainer&) = delete;

  /// Runs one epoch over the training set (epoch numbers start at 0).
  epoch_report run_epoch(uint64_t epoch);

  /// Copies the current parameters to the host.
  std::vector<float> parameters() const;

  /// Evaluates the current parameters over a whole dataset.
  batch_stats evaluate(const dataset& data);

  /// Says how full batches run: "recorded (one replay per step)" once
  /// recorded, else "op by op" and why.
  const std::string& step_mode() const { return step_mode_; }

private:
  device_trainer(const model_spec& spec, backend& compute, const dataset& train,
                 const optimizer_config& optimizer, uint64_t seed,
                 size_t batch_size, bool record_steps);

  void queue_step(size_t rows);
  void run_full_step();

  backend* compute_;
  resident_loop_ops* loop_; // compute_->resident_ops()
  network net_;
  adam_hyperparameters adam_;
  uint64_t seed_;
  size_t batch_size_;
  size_t count_;
  int features_;
  bool record_steps_;
  device_array<float> inputs_;   // (count, features): the training set
  device_array<int32_t> labels_; // (count)
  device_array<uint32_t> order_; // (count): this epoch's shuffle
  device_array<float> m_, v_;    // Adam's moments
  device_array<step_counters> counters_;
  // Host sources of the per-epoch uploads, alive until the device read them.
  std::vector<uint32_t> host_order_;
  step_counters host_counters_;
  std::unique_ptr<recorded_ops> full_step_;
  std::string step_mode_;
};

} // namespace troupe::detail
