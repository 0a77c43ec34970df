// A Keras-like sequential model over Troupe's built-in layers: dense layers
// with relu or linear activations, and a softmax output trained with sparse
// categorical cross-entropy (the backends' kernels, on every device) or a
// linear output trained with the mean squared error (on the CPU).
#pragma once

#include <string>
#include <vector>

#include <troupe/dataset.hpp>
#include <troupe/expected.hpp>
#include <troupe/fit.hpp>
#include <troupe/optimizer.hpp>

namespace troupe {

/// Describes one dense layer: units and activation ("relu", "linear", or
/// "softmax" for the output layer).
struct layer {
  int units = 0;
  std::string activation = "linear";
};

namespace layers {

/// Returns a dense layer, as keras.layers.Dense(units, activation).
inline layer dense(int units, std::string activation = "linear") {
  return layer{units, std::move(activation)};
}

} // namespace layers

/// Stacks dense layers on an input of `inputs` features, then compiles, fits,
/// evaluates and predicts as a Keras Sequential model does.
class sequential {
public:
  /// Builds the stack: keras.Sequential([Input((inputs,)), *layers]).
  sequential(int inputs, std::vector<layer> layers);

  /// Returns the stack in Troupe's description text ("784-128relu-10"), or
  /// why it is not one Troupe runs: a softmax only on the output layer, an
  /// activation it does not know, a width out of range.
  expected<std::string> description() const;

  /// Chooses the optimizer, the loss and the metrics: the loss
  /// "sparse_categorical_crossentropy" (class labels, a softmax output) with
  /// the metrics "accuracy" and "top_K_accuracy" (or Keras's
  /// "sparse_top_k_categorical_accuracy", K = 5), or "mse" (float targets, a
  /// linear output) with "mae" and "mse". Metrics beyond accuracy are scored
  /// on the validation data (fit_options::extra_metrics); fit refuses others.
  sequential& compile(optimizer_config optimizer = optimizers::adam(),
                      std::string loss = "sparse_categorical_crossentropy",
                      std::vector<std::string> metrics = {"accuracy"});

  /// Trains on `train`, scoring `validation` after each epoch (troupe::fit);
  /// the model keeps the trained parameters.
  expected<history> fit(std::shared_ptr<const data_source> train,
                        std::shared_ptr<const data_source> validation,
                        const fit_options& options = {});
  expected<history> fit(const dataset& train, const dataset& validation,
                        const fit_options& options = {});

  /// Returns the mean loss and accuracy of the trained model over `data`.
  expected<evaluation> evaluate(const data_source& data) const;
  expected<evaluation> evaluate(const dataset& data) const;

  /// Returns the class probabilities (or, for mse, the values) of every
  /// sample: (samples, outputs).
  expected<std::vector<float>> predict(const data_source& data) const;
  expected<std::vector<float>> predict(const dataset& data) const;

  /// Returns the trained model (empty parameters before fit).
  const trained_model& trained() const { return trained_; }

private:
  status check_compiled() const;
  status check_trained(const std::string& what) const;
  bool squared_error() const;
  std::string extra_metrics() const;

  int inputs_;
  std::vector<layer> layers_;
  optimizer_config optimizer_;
  std::string loss_ = "sparse_categorical_crossentropy";
  std::vector<std::string> metrics_{"accuracy"};
  trained_model trained_;
};

} // namespace troupe
