// Training a model with Troupe's replicas and variable store, and what comes
// out of it: the history of a fit and the trained model, which evaluates,
// predicts, saves and exports.
#pragma once

#include <troupe/export.hpp>

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <troupe/data_source.hpp>
#include <troupe/dataset.hpp>
#include <troupe/expected.hpp>
#include <troupe/optimizer.hpp>

namespace troupe {

/// Holds one epoch's figures, as Keras's history records them.
struct TROUPE_API epoch_result {
  uint32_t epoch = 0; // 1-based
  double loss = 0;
  double accuracy = 0;
  double val_loss = 0;
  double val_accuracy = 0;
  uint64_t samples = 0;
  double seconds = 0; // the training loop only
  double samples_per_second = 0;
  uint32_t live_replicas = 0;
  double learning_rate = 0; // of the epoch's last step: the schedule's times callbacks' factors
  /// The metrics asked for beyond loss and accuracy (extra_metrics), by
  /// their Keras names, in the order asked: "val_top_5_accuracy",
  /// "val_mae", "val_mse".
  std::vector<std::pair<std::string, double>> metrics;

  /// Returns the figure Keras names `name`: "loss", "accuracy", "val_loss",
  /// "val_accuracy", "learning_rate" or one of `metrics`; NaN for any other
  /// name.
  double metric(const std::string& name) const;
};

/// What a callback tells a fit after an epoch: go on, or end the run there
/// (with that epoch's parameters, its checkpoint when one is due, and the
/// history so far).
enum class fit_action { go_on, stop };

/// Holds a function called after each epoch with its figures, which returns
/// nothing (the run goes on) or a fit_action.
class TROUPE_API epoch_callback {
public:
  epoch_callback() = default;
  template <class F, class = std::enable_if_t<std::is_invocable_v<F&, const epoch_result&>>>
  epoch_callback(F function) // NOLINT: converts from any such function, as std::function does
    : call_([function = std::move(function)](const epoch_result& epoch) mutable {
        if constexpr (std::is_same_v<std::invoke_result_t<F&, const epoch_result&>, fit_action>)
          return function(epoch);
        else {
          function(epoch);
          return fit_action::go_on;
        }
      }) {}

  fit_action operator()(const epoch_result& epoch) const { return call_(epoch); }
  explicit operator bool() const { return static_cast<bool>(call_); }

private:
  std::function<fit_action(const epoch_result&)> call_;
};

class callback;      // <troupe/callbacks.hpp>
class trained_model; // below

namespace detail {
struct option_values; // api/option_values.hpp
struct option_access;
}

/// Holds a fit's settings: every option of a Troupe program's command line
/// (`--help` lists them: mode, replicas, nodes, TLS, checkpoints, trace,
/// metrics, progress, ...), by name, with typed setters for the common ones.
/// An option set here wins over what the model was compiled with (--model,
/// --optimizer, --lr, ...). Each option holds one value, typed; setting it
/// again replaces it.
class TROUPE_API fit_options {
public:
  fit_options();
  ~fit_options();
  fit_options(const fit_options&);
  fit_options(fit_options&&) noexcept;
  fit_options& operator=(const fit_options&);
  fit_options& operator=(fit_options&&) noexcept;

  /// Sets option `name` (without "--") to `value`, as --name=value would.
  /// The text is read as the option's type once, when a fit starts: an
  /// unknown option or a value that does not read is that fit's
  /// invalid_argument error, naming the option and what it takes.
  fit_options& set(const std::string& name, const std::string& value);

  fit_options& epochs(uint32_t count);
  fit_options& batch_size(uint32_t samples);
  fit_options& mode(const std::string& policy);
  fit_options& replicas(uint32_t count);
  fit_options& seed(uint64_t value);
  /// Weighs each training sample's loss by its class's weight, as Keras's
  /// class_weight (--class-weights): weights[c] is class c's, the classes
  /// past the end weigh 1. The loss trained on is sum_i w_i x loss_i over
  /// the batch divided by its samples; validation is not weighted.
  fit_options& class_weights(const std::vector<float>& weights);
  /// The same from class -> weight, as Keras takes it ({0: 1.0, 3: 5.5});
  /// the classes not named weigh 1.
  fit_options& class_weights(const std::map<int, float>& weights);
  /// The same from a braced list: class_weights({{3, 5.5f}, {6, 2.0f}}).
  fit_options& class_weights(std::initializer_list<std::pair<const int, float>> weights) {
    return class_weights(std::map<int, float>(weights));
  }
  /// Rounds gradients and the parameters replicas compute on to "bf16" or
  /// "fp16" (--wire; "fp32": as computed), in one process and between
  /// processes alike; the store keeps and steps fp32. "int8" sends gradients
  /// as int8 with one fp32 scale per block of 256 values and error feedback
  /// on each replica, and the parameters as bf16.
  fit_options& wire(const std::string& codec);
  /// Runs the replicas on nodes: "host:port,host:port".
  fit_options& nodes(const std::string& list);
  /// Writes TensorBoard event files of each epoch's figures under `dir`
  /// (--tensorboard): train/ and validation/, as Keras lays them out.
  fit_options& tensorboard(const std::string& dir);
  /// Validates on the last `fraction` of the training data instead of the
  /// validation source (which may then be null), as Keras's
  /// validation_split: the first floor(n * (1 - fraction)) samples train.
  fit_options& validation_split(double fraction);
  /// Scores `list` on the validation data after each epoch besides loss and
  /// accuracy (--extra-metrics): "top_K_accuracy" for a classifier (the
  /// label among the K largest outputs), "mae" and "mse" for a regression;
  /// comma-separated. Each shows in the epoch line, epoch_result::metrics
  /// (as "val_NAME"), --metrics records and TensorBoard files.
  fit_options& extra_metrics(const std::string& list);
  /// Makes the fit print nothing: no banner, no epoch lines, no final line,
  /// no warnings (the history and a --metrics file still have everything).
  fit_options& quiet();

  /// Tells whether quiet() was asked for.
  bool is_quiet() const { return quiet_; }

  /// Makes SIGINT and SIGTERM ask the fit for a graceful stop while it runs
  /// (request_stop), and a second one end the process at once with exit
  /// status 128 + the signal's number; the process's own handlers are back
  /// once fit returns. command_line's options have it on.
  fit_options& stop_on_signals(bool on = true) {
    stop_on_signals_ = on;
    return *this;
  }

  /// Tells whether stop_on_signals() is on.
  bool stops_on_signals() const { return stop_on_signals_; }

  /// Starts the fit from `model`'s parameters instead of its initialization,
  /// with a fresh optimizer (fine-tuning), here and on nodes; the model must
  /// be the one the fit trains. --start-from=FILE does the same from a
  /// saved model's file.
  fit_options& start_from(const trained_model& model);

  /// Returns the model start_from() set, or null.
  const trained_model* start_model() const { return start_model_.get(); }

  /// Tells whether option `name` was set.
  bool has(const std::string& name) const;

  /// Returns the names of the options set, in the order first set.
  std::vector<std::string> names() const;

  /// Returns the options as command-line arguments ("--name=value").
  [[deprecated("use names() and has(); options are typed values, not text")]]
  std::vector<std::string> arguments() const;

  /// Names the program in what a fit prints ("Troupe mnist: ...").
  std::string program = "troupe";

  /// Called after each epoch with its figures (a Keras callback's
  /// on_epoch_end), on the thread that called fit, so it needs no locks;
  /// returning fit_action::stop ends the run after that epoch, and an
  /// exception it throws ends the run with that error (fit returns run_failed
  /// with the exception's message within a second or two).
  epoch_callback on_epoch;

  /// Callbacks as Keras takes them (<troupe/callbacks.hpp>: early_stopping,
  /// save_best, csv_logger, or one's own), called in this order after
  /// on_epoch, on the thread that called fit; the run stops after an epoch
  /// where any of them said so.
  std::vector<std::shared_ptr<callback>> callbacks;

private:
  friend struct detail::option_access;

  std::shared_ptr<const detail::option_values> values_; // replaced, never changed, on a set
  bool quiet_ = false;
  bool stop_on_signals_ = false;
  std::shared_ptr<const trained_model> start_model_;
};

/// Holds a model's loss and accuracy over a dataset.
struct TROUPE_API evaluation {
  double loss = 0; // mean over the samples
  double accuracy = 0;
  int64_t samples = 0;
};

/// Holds a model description and its parameters: what a fit trained, or what
/// load_model read back.
class TROUPE_API trained_model {
public:
  trained_model() = default;
  trained_model(std::string description, std::vector<float> parameters)
    : description_(std::move(description)), parameters_(std::move(parameters)) {}

  /// Returns the model description ("784-128relu-10", or "name[:settings]").
  const std::string& description() const { return description_; }
  const std::vector<float>& parameters() const { return parameters_; }

  /// Returns the mean loss and the accuracy over `data`.
  expected<evaluation> evaluate(const dataset& data) const;
  expected<evaluation> evaluate(const data_source& data) const;

  /// Returns the outputs of every sample of `data` (class probabilities for
  /// a classifier): (samples, outputs) row-major.
  expected<std::vector<float>> predict(const dataset& data) const;
  expected<std::vector<float>> predict(const data_source& data) const;

  /// Returns the logits (the outputs before the softmax) of every sample of
  /// `data` for a built-in sequential model or a layered one (a
  /// convolutional network: its last dense layer's outputs): (samples,
  /// outputs) row-major. A model registered by name is invalid_argument:
  /// only its predict is known.
  expected<std::vector<float>> logits(const dataset& data) const;
  expected<std::vector<float>> logits(const data_source& data) const;

  /// Returns the number of outputs per sample.
  expected<int> outputs() const;

  /// Writes the model (description and parameters) to `path` in Troupe's
  /// saved-model format (docs/saved_model.md); load_model reads it back.
  status save(const std::string& path) const;

  /// Writes a standard ONNX model of a built-in sequential model or a
  /// layered one to `path`: input "input" (N, inputs), outputs "logits" and
  /// "probabilities". A layered model with a layer of one's own, or a model
  /// registered by name, is invalid_argument.
  status export_onnx(const std::string& path) const;

private:
  std::string description_;
  std::vector<float> parameters_;
};

/// Reads a model that trained_model::save wrote. A model registered by name
/// must be registered in this process to evaluate or predict.
TROUPE_API expected<trained_model> load_model(const std::string& path);

/// Holds what a fit did: each epoch's figures and the trained model.
struct TROUPE_API history {
  std::vector<epoch_result> epochs;
  trained_model model;
  double val_loss = 0; // of the final parameters on the validation set
  double val_accuracy = 0;
  double samples_per_second = 0; // the training loops only
  uint64_t steps = 0;            // optimizer steps (the final parameters' version)
  uint64_t params_fnv1a64 = 0;   // FNV-1a 64 of the final parameters' bytes
  std::string mode;
  uint32_t replicas = 0;
};

/// Trains the model `description` names on `train`, scoring `validation`
/// after each epoch, as `options` say, starting from `optimizer`. Every
/// wait inside is bounded or watches what it waits on (the callbacks run as
/// long as they take); bad options are invalid_argument errors, and a run
/// that ends early an error of its kind: bad_data, device, node_lost (a
/// replica, shard or node lost), timeout, stopped (as the caller asked) or
/// run_failed (a callback that threw). With --save or --export-onnx among
/// the options, the trained model is written there before fit returns (a
/// file it cannot write is an io error).
TROUPE_API expected<history> fit(const std::string& description, const optimizer_config& optimizer,
                      std::shared_ptr<const data_source> train,
                      std::shared_ptr<const data_source> validation,
                      const fit_options& options = {});

/// Asks every fit running in this process to stop gracefully: under sync
/// (or delayed) the open round closes on every shard, the checkpoint is
/// written when the fit has --checkpoint, and fit returns a `stopped` error
/// that says where it stopped and what it wrote (resuming from it ends with
/// the bits of a run never stopped); under async the run stops at once,
/// and resumes from its last epoch's checkpoint. Callable from any thread
/// and from a signal handler.
TROUPE_API void request_stop() noexcept;

/// Returns the signal that last asked for a stop through stop_on_signals
/// (SIGINT, SIGTERM), or 0 if none did.
TROUPE_API int stop_signal() noexcept;

/// Trains on datasets held in memory (fit copies them).
TROUPE_API expected<history> fit(const std::string& description, const optimizer_config& optimizer,
                      const dataset& train, const dataset& validation,
                      const fit_options& options = {});

} // namespace troupe
