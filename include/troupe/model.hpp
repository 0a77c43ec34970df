// The interface any differentiable C++ model implements to be trained by
// Troupe, and the registry that lets every process build it by name. The
// runtime sees only flat float buffers: parameters in, loss and gradient out.
#pragma once

#include <troupe/export.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <troupe/expected.hpp>

namespace troupe {

class gradient_listener;

/// Views a batch of samples: `count` rows of `inputs` features each
/// (row-major), and per row a class label (classification) or outputs()
/// float targets (regression, where labels is null). With class weights
/// (--class-weights) a training batch carries each sample's weight: a model
/// that honours them (model::honours_sample_weights) trains on
/// sum_i weights_i x loss_i / count, Keras's weighted "sum_over_batch_size".
struct TROUPE_API batch {
  const float* features = nullptr; // (count, inputs)
  const int32_t* labels = nullptr; // (count), each in [0, outputs())
  size_t count = 0;
  int inputs = 0;
  const float* targets = nullptr;  // (count, outputs()) for regression, else null
  const float* weights = nullptr;  // (count) per sample, >= 0; null: all 1
  // Where the samples came from, so that a model's randomness (dropout) can
  // be keyed by them and give each sample the same draw wherever it is
  // computed: each sample's index in the training set (null outside
  // training), the store round the batch is computed for, the run's seed.
  const uint32_t* indices = nullptr;
  uint64_t step = 0;
  uint64_t seed = 0;
  // Set by a replica that sends parts of the gradient while gradient() is
  // still running (null otherwise): see gradient_listener.
  gradient_listener* listener = nullptr;

  /// Returns row `i`'s features.
  const float* row(size_t i) const { return features + i * static_cast<size_t>(inputs); }
};

/// Names `count` floats of the flat parameter buffer from `offset` on.
struct TROUPE_API parameter_span {
  size_t offset = 0;
  size_t count = 0;
};

/// Sums over a batch: the loss of every sample, and how many a classifier
/// predicted right (its top output equals the label).
struct TROUPE_API batch_result {
  double loss_sum = 0;
  int64_t correct = 0;
};

/// Hears, during model::gradient(), which parts of the gradient are written
/// for good, so that a replica can send them to the store while the model
/// computes the rest. A model may ignore it: all it wrote is done when
/// gradient() returns. A model that reports calls loss_known() once, before
/// any done(), and done() for spans it will not write again in this call.
class TROUPE_API gradient_listener {
public:
  virtual ~gradient_listener() = default;

  /// Returns the spans wanted first: a model that can choose the order in
  /// which it writes its gradient writes these first.
  virtual std::vector<parameter_span> wanted_first() const = 0;

  /// Tells the batch's sums, which the forward pass has made.
  virtual void loss_known(const batch_result& sums) = 0;

  /// Tells that the gradient's floats in `span` are written for good.
  virtual void done(parameter_span span) = 0;
};

/// Describes a model Troupe can train: a fixed number of float parameters in
/// one flat buffer, a loss per batch and its gradient. The store, the update
/// policies, the replicas and checkpoints never look inside, so sync runs
/// stay bitwise reproducible for any model whose calls are deterministic.
///
/// Each replica builds its own instance (model_factory), so an instance may
/// keep scratch buffers; calls on one instance never overlap.
class TROUPE_API model {
public:
  virtual ~model() = default;

  /// Returns the width of one sample's features.
  virtual int inputs() const = 0;

  /// Returns the number of outputs per sample: the classes of a classifier.
  virtual int outputs() const = 0;

  /// Returns the number of floats in the flat parameter buffer.
  virtual size_t parameter_count() const = 0;

  /// Writes the initial parameters drawn from `seed` (parameter_count()
  /// floats). The same seed must give the same bits on every process.
  virtual void initialize(uint64_t seed, float* parameters) const = 0;

  /// Writes the gradient of the batch's MEAN loss with respect to the
  /// parameters into `gradient` (parameter_count() floats) and returns the
  /// batch's summed loss and correct predictions. A model that honours
  /// samples.weights returns the weighted sum of the losses and the gradient
  /// of that sum divided by samples.count. It may tell samples.listener, if
  /// set, as parts of the gradient are done (the built-in models do).
  virtual batch_result gradient(const float* parameters, const batch& samples,
                                float* gradient) = 0;

  /// Tells whether gradient() honours samples.weights. A run with class
  /// weights refuses a model that says no (the default): its weights would
  /// be silently ignored.
  virtual bool honours_sample_weights() const { return false; }

  /// Returns the spans of the parameter buffer that hold model state rather
  /// than weights (batch normalization's moving mean and variance), in
  /// order. For a float of such a span gradient() writes the change it asks
  /// for, its current value minus its new one, and the store moves it by
  /// the round's mean of those changes (weighted by each replica's share of
  /// the round's samples) instead of optimizing it: no learning rate,
  /// momentum, weight decay or clipping touches it. With one replica the
  /// float becomes the replica's new value; with several, their weighted mean.
  virtual std::vector<parameter_span> state_spans() const { return {}; }

  /// Returns the batch's summed loss and correct predictions, forward only.
  virtual batch_result evaluate(const float* parameters, const batch& samples) = 0;

  /// Writes the outputs (class probabilities for a classifier) of `count`
  /// samples: outputs: (count, outputs()).
  virtual void predict(const float* parameters, const float* features, size_t count,
                       float* outputs) = 0;
};

/// Builds a model from its settings text (what follows "name:" in a model
/// description, empty when there is none), or says why it cannot.
using model_factory =
  std::function<expected<std::unique_ptr<model>>(const std::string& settings)>;

/// Registers a model under `name`, so that a run described as "name" or
/// "name:settings" trains it. Every process of a run (the coordinator and
/// each node) must register the same models: the handshake compares their
/// fingerprints. Register before the first fit or node_main. A name that is
/// already registered is replaced.
TROUPE_API void register_model(const std::string& name, model_factory factory);

/// Returns the names of the registered models, sorted.
TROUPE_API std::vector<std::string> registered_models();

/// Builds the model a description names: a built-in sequential text such as
/// "784-128relu-10", or a registered "name[:settings]".
TROUPE_API expected<std::unique_ptr<model>> make_model(const std::string& description);

} // namespace troupe
