// A layered model (a convolutional network) as a troupe::model: the layers
// of a stack_spec, then a softmax cross-entropy on the last one's logits.
// It computes on the host, through the model seam every registered model
// takes, so the store, the policies, nodes and checkpoints serve it as they
// serve any model.
#pragma once

#include <memory>
#include <vector>

#include <troupe/model.hpp>

#include "model/layers/layer_spec.hpp"

namespace troupe::detail {

/// Runs a stack of layer_ops over flat parameters.
class layered_model final : public model {
public:
  layered_model(stack_spec spec, std::vector<std::unique_ptr<layer_op>> ops);

  int inputs() const override { return static_cast<int>(spec_.input.size()); }
  int outputs() const override { return spec_.layers.back().units; }
  size_t parameter_count() const override { return offsets_.back(); }
  void initialize(uint64_t seed, float* parameters) const override;
  /// Returns each layer's state (layer_op::state_count), the last floats of its parameters.
  std::vector<parameter_span> state_spans() const override;
  batch_result gradient(const float* parameters, const batch& samples,
                        float* gradient) override;
  batch_result evaluate(const float* parameters, const batch& samples) override;
  void predict(const float* parameters, const float* features, size_t count,
               float* outputs) override;

  /// Writes the logits of `count` samples: the last dense layer's outputs
  /// before the softmax, dropout the identity.
  // features: (count, inputs()), logits: (count, outputs())
  void logits(const float* parameters, const float* features, size_t count, float* logits);

private:
  // Runs every layer forward; returns the logits.
  const float* forward(const float* parameters, const float* features, size_t count,
                       const pass_keys& keys);

  stack_spec spec_;
  std::vector<std::unique_ptr<layer_op>> ops_;
  std::vector<size_t> offsets_; // layer i's parameters start at offsets_[i]; the last: the count
  std::vector<std::vector<float>> outputs_; // each layer's, of the last forward pass
  std::vector<float> dlogits_;
  std::vector<float> upstream_, downstream_; // gradients passed between layers
};

/// Builds the layered model `text` describes (layer_spec.hpp).
expected<std::unique_ptr<model>> make_layered_model(const std::string& text);

/// Builds it as a layered_model, for what only a layered model gives (its logits).
expected<std::unique_ptr<layered_model>> make_layered_stack(const std::string& text);

} // namespace troupe::detail
