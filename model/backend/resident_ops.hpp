// The ops of a training loop that lives in backend memory (device_trainer):
// the batch is gathered, the step counted and Adam's step number read on the
// device, and a whole step is recorded once and replayed.
//
// A backend offers them through backend::resident_ops(), which returns null
// where the backend cannot run the loop. A query rather than a second base
// class that callers dynamic_cast to: "not supported" is then a plain value
// the caller checks (device_trainer::make turns it into an error), and a
// backend that implements only the per-step ops needs to write nothing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

#include "common/expected.hpp"
#include "model/backend/adam_coefficients.hpp"

namespace troupe::detail {

/// Says where a device-driven training loop stands. It lives in backend
/// memory so that a recorded step (see resident_loop_ops::record) reads and
/// advances it on the device: the host queues the same step again and again.
struct step_counters {
  int64_t cursor = 0; // the next batch starts at order[cursor]
  int64_t steps = 0;  // optimizer steps taken, Adam's t
};

/// Replays a sequence of ops that resident_loop_ops::record captured.
class recorded_ops {
public:
  virtual ~recorded_ops() = default;
  /// Queues the recorded ops again, in order, as one unit.
  virtual void replay() = 0;
};

/// Runs the device-resident loop's own ops on the backend that returned it.
/// Pointers point into that backend's memory; ops queue on its stream.
class resident_loop_ops {
public:
  virtual ~resident_loop_ops() = default;

  /// Copies rows order[counters->cursor + r], r < rows, of a resident data set
  /// (inputs: (n, features), labels: (n)) into inputs_out and labels_out.
  /// The caller guarantees that cursor + rows stays within order.
  virtual void gather_rows(const float* inputs, const int32_t* labels, int features,
                           const uint32_t* order, const step_counters* counters,
                           int rows, float* inputs_out, int32_t* labels_out) = 0;

  /// counters->cursor += rows; counters->steps += 1.
  virtual void advance_step(step_counters* counters, int rows) = 0;

  /// Like backend::adam_update, with the step number t = counters->steps read
  /// on the device (1-based: call after advance_step) and the coefficients
  /// derived from it as adam_step_coefficients does on the host.
  virtual void adam_update_counted(float* weights, const float* gradient, float* m,
                                   float* v, size_t count,
                                   const adam_hyperparameters& h,
                                   const step_counters* counters) = 0;

  /// Records the ops that `queue_ops` queues, without running them, so that
  /// replay() queues them all again at once (on a GPU: a CUDA graph, one
  /// launch instead of one per op). queue_ops may queue ops only: no copies
  /// to the host, no allocation. By default replay() calls queue_ops again.
  /// A device that cannot record is an error value; callers then queue the
  /// ops one by one.
  virtual expected<std::unique_ptr<recorded_ops>> record(std::function<void()> queue_ops);
};

} // namespace troupe::detail
