// One layer of a layered model (model/layers/layered_model.hpp): a shape in,
// a shape out, parameters in a slice of the model's flat buffer, a forward
// pass and a backward pass over a batch of samples in channels-last order
// (sample, row, column, channel), as Keras lays them out.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace troupe {

/// Describes one sample's tensor: height x width x channels (a flat vector
/// is 1 x 1 x n).
struct tensor_shape {
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
struct pass_keys {
  uint64_t seed = 0;                 // the run's
  uint64_t step = 0;                 // the store round the batch is computed for
  const uint32_t* indices = nullptr; // each sample's index in the training set; null: its row
  bool training = false;             // false: evaluation and prediction
};

/// Computes one layer of a stack. Calls on one instance never overlap; it
/// may keep scratch space between a forward pass and its backward pass.
class layer_op {
public:
  virtual ~layer_op() = default;

  /// Returns the shape each sample leaves the layer with.
  virtual tensor_shape output_shape() const = 0;

  /// Returns the number of floats of the layer's parameters.
  virtual size_t parameter_count() const { return 0; }

  /// Writes the initial parameters (Keras's initializers) from `seed`.
  virtual void initialize(uint64_t seed, float* parameters) const { (void) seed, (void) parameters; }

  /// Writes `count` samples' outputs y from their inputs x.
  virtual void forward(const float* parameters, const float* x, float* y, size_t count,
                       const pass_keys& keys) = 0;

  /// Writes the gradient of the parameters (overwriting) and, unless dx is
  /// null, of the inputs, from the gradient dy of the outputs of the last
  /// forward pass over x (which gave y).
  virtual void backward(const float* parameters, const float* x, const float* y,
                        const float* dy, float* dx, float* dparameters, size_t count,
                        const pass_keys& keys) = 0;
};

} // namespace troupe
