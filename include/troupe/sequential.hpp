// A Keras-like sequential model over Troupe's built-in layers: dense layers
// with relu or linear activations, and a softmax output trained with sparse
// categorical cross-entropy (the backends' kernels, on every device) or a
// linear output trained with the mean squared error (on the CPU); and
// convolutional networks (conv2d, max_pool2d, flatten, dropout, dense) on an
// image input, on the CPU.
#pragma once

#include <troupe/export.hpp>

#include <string>
#include <vector>

#include <troupe/dataset.hpp>
#include <troupe/expected.hpp>
#include <troupe/fit.hpp>
#include <troupe/optimizer.hpp>

namespace troupe {

/// Describes one layer: its kind ("dense", "conv2d", "max_pool2d",
/// "average_pool2d", "global_average_pool2d", "flatten", "dropout" or
/// "activation") and what that kind takes. Activations, as Keras names
/// them: "relu", "tanh", "sigmoid", "leaky_relu" (negative slope 0.2),
/// "elu", "gelu" (exact) and "linear"; "softmax" on the output layer. A dense
/// stack with relu alone runs the backends' kernels on any device; any other
/// stack computes on the CPU.
struct TROUPE_API layer {
  int units = 0; // dense: outputs; conv2d: filters
  std::string activation = "linear";
  std::string kind = "dense";
  int size = 0;    // conv2d: the kernel's side K (K x K); max_pool2d: the pool's side
  int strides = 1; // conv2d
  float rate = 0;  // dropout
  std::string name = {};     // custom: a layer registered with register_layer (<troupe/layer.hpp>)
  std::string settings = {}; // custom: its settings text
  std::string padding = "valid"; // conv2d: "valid" or "same"
};

namespace layers {

/// Returns a dense layer, as keras.layers.Dense(units, activation).
inline layer dense(int units, std::string activation = "linear") {
  return layer{units, std::move(activation)};
}

/// Returns a 2-D convolution of `filters` kernels of kernel_size x
/// kernel_size, as keras.layers.Conv2D(filters, kernel_size, strides,
/// padding, activation=...): padding "valid" or "same" (zeros, the output
/// ceil(input / strides) wide), Glorot-uniform kernels, zero biases.
inline layer conv2d(int filters, int kernel_size, std::string activation = "linear",
                    int strides = 1, std::string padding = "valid") {
  return layer{filters, std::move(activation), "conv2d", kernel_size, strides, 0, {}, {},
               std::move(padding)};
}

/// Returns a max pool of pool_size x pool_size with stride pool_size, as
/// keras.layers.MaxPooling2D(pool_size).
inline layer max_pool2d(int pool_size = 2) {
  return layer{0, "linear", "max_pool2d", pool_size, pool_size, 0};
}

/// Returns an average pool of pool_size x pool_size with stride pool_size, as
/// keras.layers.AveragePooling2D(pool_size).
inline layer average_pool2d(int pool_size = 2) {
  return layer{0, "linear", "average_pool2d", pool_size, pool_size, 0};
}

/// Returns keras.layers.GlobalAveragePooling2D(): each channel's mean.
inline layer global_average_pool2d() {
  return layer{0, "linear", "global_average_pool2d", 0, 1, 0};
}

/// Returns keras.layers.Activation(name): relu, tanh, sigmoid, leaky_relu,
/// elu or gelu as a layer of its own.
inline layer activation(std::string name) {
  return layer{0, std::move(name), "activation", 0, 1, 0};
}

/// Returns the layer registered as `name` (register_layer), built with
/// `settings` over the shape the layers before it leave.
inline layer custom(std::string name, std::string settings = "") {
  return layer{0, "linear", "custom", 0, 1, 0, std::move(name), std::move(settings)};
}

/// Returns keras.layers.LayerNormalization(): each position's channels (a
/// flat vector's values) to mean 0 and variance 1 (epsilon 1e-3), then
/// times gamma plus beta, per channel.
inline layer layer_normalization() {
  return layer{0, "linear", "layer_normalization", 0, 1, 0};
}

/// Returns keras.layers.BatchNormalization(): in training each channel to
/// the batch's mean 0 and variance 1 (epsilon 1e-3), then times gamma plus
/// beta; in evaluation and prediction by the moving mean and variance
/// (momentum 0.99), which the store averages over the replicas each round.
inline layer batch_normalization() {
  return layer{0, "linear", "batch_normalization", 0, 1, 0};
}

/// Returns keras.layers.Flatten().
inline layer flatten() {
  return layer{0, "linear", "flatten", 0, 1, 0};
}

/// Returns keras.layers.Dropout(rate): in training each value is dropped with
/// probability `rate` (the others scaled by 1 / (1 - rate)), drawn from the
/// run's seed, the step and the sample's index, so a sync run keeps its bits
/// wherever each sample is computed.
inline layer dropout(float rate) {
  return layer{0, "linear", "dropout", 0, 1, rate};
}

} // namespace layers

/// Stacks dense layers on an input of `inputs` features, then compiles, fits,
/// evaluates and predicts as a Keras Sequential model does.
class TROUPE_API sequential {
public:
  /// Builds the stack: keras.Sequential([Input((inputs,)), *layers]).
  sequential(int inputs, std::vector<layer> layers);

  /// Builds the stack on an image input (height, width, channels), channels
  /// last as Keras's: keras.Sequential([Input(shape), *layers]). A stack
  /// with convolutions, pooling or dropout trains on the CPU.
  sequential(std::vector<int> input_shape, std::vector<layer> layers);

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
  bool layered() const;
  expected<std::string> layered_description() const;

  int inputs_;
  std::vector<int> input_shape_; // (height, width, channels), or empty: a flat input
  std::vector<layer> layers_;
  optimizer_config optimizer_;
  std::string loss_ = "sparse_categorical_crossentropy";
  std::vector<std::string> metrics_{"accuracy"};
  trained_model trained_;
};

} // namespace troupe
