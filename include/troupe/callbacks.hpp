// Callbacks that steer a fit, as Keras has them: the interface, and the
// built-in early stopping, best-model checkpoint and CSV logger.
#pragma once

#include <troupe/export.hpp>

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
class TROUPE_API callback {
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

  /// Says by what factor the learning rate changes for the epochs after
  /// `epoch` (1: it stays), asked after on_epoch_end. The factors of all
  /// callbacks multiply, and the run's rate is the schedule's times every
  /// factor so far; checkpoints keep that product, so a resumed run goes on
  /// with it. A factor that is not a positive number ends the run.
  virtual double learning_rate_factor(const epoch_result& epoch) {
    (void) epoch;
    return 1.0;
  }

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
TROUPE_API std::shared_ptr<callback> early_stopping(const std::string& monitor = "val_loss",
                                         uint32_t patience = 0, double min_delta = 0,
                                         bool restore_best = false);

/// Saves the model to `path` (trained_model::save) after each epoch whose
/// `monitor` is the best so far, as Keras's ModelCheckpoint with
/// save_best_only; a file it cannot write ends the run with that error.
TROUPE_API std::shared_ptr<callback> save_best(const std::string& path,
                                    const std::string& monitor = "val_loss");

/// Multiplies the learning rate by `factor` once `monitor` has not improved
/// by more than `min_delta` for `patience` epochs in a row, then waits
/// `cooldown` epochs before it counts again, never going below `min_lr`, as
/// Keras's ReduceLROnPlateau. Under a schedule it scales the schedule's
/// rates. `factor` must lie in (0, 1).
TROUPE_API std::shared_ptr<callback> reduce_on_plateau(const std::string& monitor = "val_loss",
                                            double factor = 0.1, uint32_t patience = 10,
                                            double min_delta = 1e-4, uint32_t cooldown = 0,
                                            double min_lr = 0);

/// Writes each epoch's figures to the CSV file `path` as Keras's CSVLogger:
/// a header line, then a line per epoch (written and flushed as it ends),
/// with the learning rate and the fit's further metrics.
TROUPE_API std::shared_ptr<callback> csv_logger(const std::string& path);

} // namespace callbacks

} // namespace troupe
