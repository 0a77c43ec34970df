// A layered model whose layers run on one CUDA device, through the host
// seam every troupe::model takes. No CUDA header is reached from here.
#pragma once

#include <memory>

#include <troupe/model.hpp>

#include "common/expected.hpp"
#include "model/layers/layer_spec.hpp"

namespace troupe::detail {

/// Runs a stack of the built-in layers' CUDA twins: parameters, activations
/// and scratch live on the device; each call copies the parameters and the
/// batch in and its results out, and returns once they are on the host.
/// Every sum runs in a fixed order, so a call gives the same bits each time
/// on the same device.
class cuda_layered_model final : public model {
public:
  struct state;
  explicit cuda_layered_model(std::unique_ptr<state> s);
  ~cuda_layered_model() override;

  int inputs() const override;
  int outputs() const override;
  size_t parameter_count() const override;
  void initialize(uint64_t seed, float* parameters) const override;
  /// Returns the host stack's: batch normalization's moving statistics.
  std::vector<parameter_span> state_spans() const override;
  batch_result gradient(const float* parameters, const batch& samples,
                        float* gradient) override;
  batch_result evaluate(const float* parameters, const batch& samples) override;
  void predict(const float* parameters, const float* features, size_t count,
               float* outputs) override;

  /// Writes the logits of `count` samples, dropout the identity.
  // features: (count, inputs()), logits: (count, outputs())
  void logits(const float* parameters, const float* features, size_t count, float* logits);

private:
  std::unique_ptr<state> state_;
};

/// Builds `spec`'s stack on CUDA device `device_index`. `reference`, the same
/// stack on the host, writes the initial parameters, so that a seed gives
/// the CPU's bits. Fails (errc::device) when the device cannot
/// be opened, and (invalid_argument) on a layer with no CUDA twin.
expected<std::unique_ptr<cuda_layered_model>>
make_cuda_layered_model(const stack_spec& spec, std::unique_ptr<model> reference,
                        int device_index);

} // namespace troupe::detail
