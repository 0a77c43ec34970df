// A layer of one's own: the interface Troupe's built-in layers implement
// (conv2d, pooling, dropout, dense, ...), and the registry that lets a
// layered model's description name a user's layer, so that it stacks with
// the built-in ones, here and on every node.
#pragma once

#include <troupe/export.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <troupe/expected.hpp>

namespace troupe {

/// Describes one sample's tensor: height x width x channels, channels last
/// as Keras lays them out (a flat vector is 1 x 1 x n).
struct TROUPE_API tensor_shape {
  int height = 1;
  int width = 1;
  int channels = 1;

  size_t size() const {
    return static_cast<size_t>(height) * static_cast<size_t>(width) *
           static_cast<size_t>(channels);
  }
  bool flat() const { return height == 1 && width == 1; }
  /// Returns "28x28x1".
  std::string text() const;
};

/// Says where a batch's samples came from, for layers whose training pass
/// draws random numbers (dropout): keyed by these, a sample gets the same
/// draw whichever replica, thread or process computes it.
struct TROUPE_API pass_keys {
  uint64_t seed = 0;                 // the run's
  uint64_t step = 0;                 // the store round the batch is computed for
  const uint32_t* indices = nullptr; // each sample's index in the training set; null: its row
  bool training = false;             // false: evaluation and prediction
};

/// Computes one layer of a stack over batches of samples, each a tensor of
/// its input shape, samples one after another. Each replica builds its own
/// instance, and calls on one instance never overlap, so it may keep scratch
/// space between a forward pass and the backward pass after it. A sync run
/// keeps its bits when every call is deterministic.
class TROUPE_API layer_op {
public:
  virtual ~layer_op() = default;

  /// Returns the shape each sample leaves the layer with.
  virtual tensor_shape output_shape() const = 0;

  /// Returns the number of floats of the layer's parameters (0: none).
  virtual size_t parameter_count() const { return 0; }

  /// Returns how many of the parameter_count() floats, at their end, are
  /// state rather than weights (batch normalization's moving statistics):
  /// backward writes, for each, its current value minus the new value it
  /// asks for, and the store averages the replicas' new values
  /// (model::state_spans).
  virtual size_t state_count() const { return 0; }

  /// Writes the initial parameters from `seed`; the same seed must give the
  /// same bits in every process.
  virtual void initialize(uint64_t seed, float* parameters) const {
    (void) seed, (void) parameters;
  }

  /// Writes `count` samples' outputs y from their inputs x.
  virtual void forward(const float* parameters, const float* x, float* y, size_t count,
                       const pass_keys& keys) = 0;

  /// Writes the gradient of the loss with respect to the parameters
  /// (overwriting dparameters) and, unless dx is null, to the inputs, from
  /// dy, its gradient with respect to the outputs of the last forward pass
  /// (over x, which gave y).
  virtual void backward(const float* parameters, const float* x, const float* y,
                        const float* dy, float* dx, float* dparameters, size_t count,
                        const pass_keys& keys) = 0;
};

/// Builds a layer from its settings text (what a description gives in
/// "@name(settings)", empty when there are none) over input shape `input`,
/// or says why it cannot.
using layer_factory = std::function<expected<std::unique_ptr<layer_op>>(
  const std::string& settings, tensor_shape input)>;

/// Registers a layer under `name` (letters, digits and '_'), so that a
/// layered model's description takes it as "@name" or "@name(settings)"
/// (settings without parentheses). Every process of a run registers the
/// same layers, before the first fit or node_main; the handshake compares
/// the model's fingerprint. A name registered again is replaced.
TROUPE_API void register_layer(const std::string& name, layer_factory factory);

} // namespace troupe
