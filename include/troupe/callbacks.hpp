// Callbacks that steer a fit, as Keras has them: the interface, and the
// built-in early stopping, best-model checkpoint and CSV logger.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <troupe/expected.hpp>
#include <troupe/fit.hpp>

namespace troupe {

/// Hears a fit, as a Keras Callback does. Every method runs on the thread
/// that called fit, one call at a time, so a callback needs no locks. One
/// that throws ends the run: fit returns a run_failed error carrying the
/// exception's message.
class callback {
public:
  virtual ~callback() = default;

  /// Checks, before the run starts, that the callback can work with a fit
  /// whose epochs report `metrics` (the names epoch_result::metric knows
  /// that this fit fills); a failure is the fit's invalid_argument error.
  virtual status check(const std::vector<std::string>& metrics) const {
    (void) metrics;
    return {};
  }

  /// Hears an epoch's figures and the model as that epoch left it.
  virtual fit_action on_epoch_end(const epoch_result& epoch, const trained_model& model) = 0;

  /// Hears the end of a run that succeeded, and may change its history
  /// (early_stopping's restore_best puts the best epoch's model there).
  virtual void on_train_end(history& result) { (void) result; }
};

namespace callbacks {

/// Stops the run once `monitor` ("val_loss", "val_accuracy", "loss" or
/// "accuracy"; a name with "accuracy" in it is better higher, others lower)
/// has not improved by more than `min_delta` for `patience` epochs in a row,
/// as Keras's EarlyStopping; with `restore_best`, a run it stopped returns
/// the model of its best epoch (and that model's val figures and checksum).
std::shared_ptr<callback> early_stopping(const std::string& monitor = "val_loss",
                                         uint32_t patience = 0, double min_delta = 0,
                                         bool restore_best = false);

/// Saves the model to `path` (trained_model::save) after each epoch whose
/// `monitor` is the best so far, as Keras's ModelCheckpoint with
/// save_best_only; a file it cannot write ends the run with that error.
std::shared_ptr<callback> save_best(const std::string& path,
                                    const std::string& monitor = "val_loss");

/// Writes each epoch's figures to the CSV file `path` as Keras's CSVLogger:
/// a header line, then a line per epoch (written and flushed as it ends).
std::shared_ptr<callback> csv_logger(const std::string& path);

} // namespace callbacks

} // namespace troupe
