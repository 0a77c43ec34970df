// The built-in sequential MLP as a troupe::model: the network on the CPU
// backend, for what asks for any model (evaluation, prediction, gradient
// checks). Replicas run the network directly, on any backend.
#pragma once

#include <memory>

#include <troupe/model.hpp>

#include "model/backend/backend.hpp"
#include "model/model_spec.hpp"
#include "model/network.hpp"

namespace troupe {

/// Computes a model_spec's network on the CPU (Eigen) backend.
class builtin_model : public model {
public:
  explicit builtin_model(model_spec spec);

  const model_spec& spec() const { return spec_; }

  int inputs() const override { return spec_.inputs; }
  int outputs() const override { return spec_.classes(); }
  size_t parameter_count() const override;
  void initialize(uint64_t seed, float* parameters) const override;
  batch_result gradient(const float* parameters, const batch& samples,
                        float* gradient) override;
  /// Tells whether sample weights count: for the cross-entropy, not the squared error.
  bool honours_sample_weights() const override {
    return spec_.loss == loss_kind::softmax_cross_entropy;
  }
  batch_result evaluate(const float* parameters, const batch& samples) override;
  void predict(const float* parameters, const float* features, size_t count,
               float* outputs) override;

private:
  network& network_for(size_t batch);

  model_spec spec_;
  std::unique_ptr<backend> cpu_;
  std::unique_ptr<network> net_;      // gradients: grows with the batch
  std::unique_ptr<network> eval_net_; // evaluation
};

} // namespace troupe
