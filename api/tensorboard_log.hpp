// --tensorboard: each epoch's figures as TensorBoard scalars, in the layout of
// Keras's TensorBoard callback (DIR/train and DIR/validation, "epoch_*" tags,
// the epoch as the step).
#pragma once

#include <memory>
#include <string>

#include <troupe/expected.hpp>

#include "actors/config/run_config.hpp"
#include "actors/report/fit_observer.hpp"
#include "actors/report/metrics_log.hpp"

namespace troupe::detail {

class tensorboard_file;

/// The two event files of one fit.
class tensorboard_log {
public:
  /// Opens DIR/train and DIR/validation; an error names the file.
  static expected<std::unique_ptr<tensorboard_log>> open(const std::string& dir);
  ~tensorboard_log();

  /// Writes epoch `r`'s figures: loss (and accuracy when `scores` has it),
  /// learning rate, samples/s and, when the policy reports it, staleness to
  /// train/; the validation figures to validation/. A file that cannot be
  /// written warns once on stderr and writes no more.
  void write_epoch(const epoch_record& r, reported_metrics scores);

private:
  tensorboard_log(std::unique_ptr<tensorboard_file> train,
                  std::unique_ptr<tensorboard_file> validation);

  std::unique_ptr<tensorboard_file> train_;
  std::unique_ptr<tensorboard_file> validation_;
  bool failed_ = false;
};

} // namespace troupe::detail
