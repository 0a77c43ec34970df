// The built-in sequential MLP as a troupe::model: the network on one backend
// (the CPU's unless told), with the device capability a replica uses for its
// hand-over. Replicas, evaluation, prediction and gradient checks all take it
// through the same model seam.
#pragma once

#include <memory>

#include <troupe/model.hpp>

#include "model/backend/backend.hpp"
#include "model/device_capability.hpp"
#include "model/model_spec.hpp"
#include "model/network.hpp"

namespace troupe::detail {

/// Computes a model_spec's network on a backend.
class builtin_model : public model, public device_capability {
public:
  /// Computes on the CPU (Eigen) backend; buffers are made at the first batch.
  explicit builtin_model(model_spec spec);

  /// Computes on `compute` with buffers for batches of up to `max_batch`
  /// samples, made now (they grow with a larger batch).
  builtin_model(model_spec spec, std::shared_ptr<backend> compute, size_t max_batch);

  const model_spec& spec() const { return spec_; }

  int inputs() const override { return spec_.inputs; }
  int outputs() const override { return spec_.classes(); }
  size_t parameter_count() const override;
  void initialize(uint64_t seed, float* parameters) const override;
  /// Honours targets (squared error) and sample weights; indices, step and
  /// seed play no part.
  batch_result gradient(const float* parameters, const batch& samples,
                        float* gradient) override;
  /// Tells whether sample weights count: for the cross-entropy, not the squared error.
  bool honours_sample_weights() const override {
    return spec_.loss == loss_kind::softmax_cross_entropy;
  }
  batch_result evaluate(const float* parameters, const batch& samples) override;
  void predict(const float* parameters, const float* features, size_t count,
               float* outputs) override;

  // device_capability
  bool reserve(size_t max_batch) override;
  bool last_gradient_proven_finite() const override;
  void use_parameters(const float* parameters) override { net().use_parameters(parameters); }
  float* device_parameters() override { return net().device_parameters(); }
  void use_device_parameters() override { net().use_device_parameters(); }
  float* staged_inputs() override { return net().staged_inputs(); }
  int32_t* staged_labels() override { return net().staged_labels(); }
  void queue_staged_checked_gradient(size_t batch) override {
    net().queue_staged_checked_gradient(batch);
  }
  const float* device_gradient() override { return net().device_gradient(); }
  const float* device_non_finite_flag() override { return net().device_non_finite_flag(); }
  void queue_take_stats(float* page_locked) override { net().queue_take_stats(page_locked); }

private:
  network& net() { return network_for(1); }
  network& network_for(size_t batch);

  model_spec spec_;
  std::shared_ptr<backend> compute_;
  std::unique_ptr<network> net_;      // gradients: grows with the batch
  std::unique_ptr<network> eval_net_; // evaluation
};

} // namespace troupe::detail
