// A dense network (model_spec) computed by one backend: forward, backward and
// evaluation over batches. Parameters and gradients use parameter_layout.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include <troupe/model.hpp>

#include "model/backend/backend.hpp"
#include "model/model_spec.hpp"
#include "model/parameter_layout.hpp"

namespace troupe::detail {

/// Sums over a batch: cross-entropy loss and correct predictions.
struct batch_stats {
  double loss_sum = 0;
  int64_t correct = 0;
  int64_t samples = 0;
  bool non_finite = false; // a gradient held NaN or Inf (queue_staged_checked_gradient)

  double mean_loss() const { return samples > 0 ? loss_sum / samples : 0.0; }
  double accuracy() const {
    return samples > 0 ? static_cast<double>(correct) / samples : 0.0;
  }
  batch_stats& operator+=(const batch_stats& other) {
    loss_sum += other.loss_sum;
    correct += other.correct;
    samples += other.samples;
    non_finite = non_finite || other.non_finite;
    return *this;
  }
};

/// Runs a model_spec on one backend with buffers for batches of up to
/// max_batch samples, allocated once.
class network {
public:
  network(const model_spec& spec, backend& compute, size_t max_batch);

  const model_spec& spec() const { return spec_; }
  const parameter_layout& layout() const { return layout_; }
  size_t max_batch() const { return max_batch_; }
  backend& compute() const { return *backend_; }

  /// Makes the next steps use `params` (layout().size() floats). On a device
  /// backend they are copied; on a host backend they are read in place, so
  /// they must stay alive and unchanged until the next call.
  void use_parameters(const float* params);

  /// Computes the gradient of the mean loss over one batch and writes it to
  /// gradient_out (host, layout().size() floats). inputs: (batch, spec().inputs).
  /// A batch of 0 samples gives a zero gradient. A squared-error model reads
  /// `targets` (batch, classes()) instead of the labels, on a host backend.
  /// With `weights` (batch), on a host backend, the loss is Keras's weighted
  /// "sum_over_batch_size": sum_i weights_i x loss_i / batch, and loss_sum
  /// sums weights_i x loss_i (with every weight 1, the bits of no weights).
  /// On a host backend it tells `listener`, if set, the batch's sums and
  /// each part of the gradient once written (the layers from the last, the
  /// first layer's weights in blocks of rows, the ones it wants first first).
  batch_stats compute_gradient(const float* inputs, const int32_t* labels,
                               size_t batch, float* gradient_out,
                               const float* targets = nullptr,
                               const float* weights = nullptr,
                               gradient_listener* listener = nullptr);

  /// Tells whether the gradient compute_gradient wrote last is proven to
  /// hold only finite floats (see gradient_proven_finite in network.cpp):
  /// a store shard in this process need not read all of it to check. False
  /// says nothing: on a device, or when the bounds do not prove it.
  bool last_gradient_proven_finite() const { return proven_finite_; }

  /// Computes loss and accuracy over `count` samples (any count), forward only.
  batch_stats evaluate(const float* inputs, const int32_t* labels, size_t count,
                       const float* targets = nullptr);

  // --- device-resident training (a single replica on a GPU) ----------------
  /// Returns the network's own parameter buffer on the device; after
  /// use_device_parameters() the steps read it.
  float* device_parameters() { return own_params_.data(); }
  const float* device_parameters() const { return own_params_.data(); }
  /// Makes the steps read device_parameters() (upload into it first).
  void use_device_parameters() { params_ = own_params_.data(); }

  /// Returns the gradient buffer that compute_gradient_on_device() fills.
  float* device_gradient() { return gradient_.data(); }
  /// Like compute_gradient, but the gradient stays on the device and the stats
  /// accumulate on the device until take_stats().
  void compute_gradient_on_device(const float* inputs, const int32_t* labels,
                                  size_t batch);
  /// Returns (and clears) the stats accumulated by compute_gradient_on_device.
  batch_stats take_stats();
  /// The floats queue_take_stats copies.
  static constexpr size_t stats_size = 3;
  /// take_stats without the wait: queues a copy of the stats into
  /// `page_locked` (stats_size floats from backend::allocate_host) and clears
  /// them. stats_from reads the copy once an event recorded after it fired.
  void queue_take_stats(float* page_locked);
  static batch_stats stats_from(const float* copied);
  /// The float queue_staged_checked_gradient sets on NaN or Inf (device memory).
  const float* device_non_finite_flag() const { return stats_.data() + 2; }

  // --- device-driven steps (see device_trainer) -----------------------------
  /// Returns the batch buffers (max_batch rows, backend memory) that
  /// queue_staged_gradient() reads; ops such as gather_rows fill them.
  float* staged_inputs() { return input_.data(); }
  int32_t* staged_labels() { return labels_.data(); }
  /// Queues the gradient of the `batch` rows in staged_inputs() into
  /// device_gradient(), adding loss and hits to the device stats. It only
  /// queues ops (no copy, no wait), so a backend can record it; it counts no
  /// samples: take_stats() then reports 0 samples for these steps.
  void queue_staged_gradient(size_t batch);
  /// queue_staged_gradient, then flags the gradient if it holds NaN or Inf;
  /// take_stats() reports the flag (batch_stats::non_finite).
  void queue_staged_checked_gradient(size_t batch);

private:
  void forward(size_t batch);
  void backward(size_t batch, float* gradient);
  void weight_gradient(size_t layer, int rows, float* gradient);
  void tell_done(size_t offset, size_t count);
  bool gradient_proven_finite(size_t batch) const;
  void upload_batch(const float* inputs, const int32_t* labels, size_t batch);
  void gradient_into(const float* inputs, const int32_t* labels, size_t batch,
                     float* gradient);
  void queue_gradient(size_t batch, float* gradient);
  void loss_step(size_t batch, float scale, float* dlogits);
  void squared_error_step(size_t batch, float scale, float* doutputs);
  void weighted_cross_entropy_step(size_t batch, float scale, float* dlogits);

  model_spec spec_;
  parameter_layout layout_;
  backend* backend_;
  size_t max_batch_;
  const float* params_ = nullptr;     // what the ops read: own_params_ or the caller's
  device_array<float> own_params_;    // (layout.size())
  device_array<float> gradient_;      // (layout.size())
  device_array<float> input_;         // (max_batch, inputs)
  device_array<int32_t> labels_;      // (max_batch)
  const float* input_ptr_ = nullptr;  // the batch the ops read: input_ or the caller's
  const int32_t* labels_ptr_ = nullptr;
  const float* targets_ptr_ = nullptr; // squared error: the batch's targets, on the host
  const float* weights_ptr_ = nullptr; // the batch's sample weights, on the host; null: all 1
  gradient_listener* listener_ = nullptr; // compute_gradient's, during the call
  std::vector<float> row_scratch_;        // a block of the first layer's inputs
  std::vector<device_array<float>> activations_; // per layer: (max_batch, units)
  std::vector<device_array<float>> deltas_;      // per layer: (max_batch, units)
  device_array<float> stats_;         // [loss_sum, correct, non_finite]
  int64_t pending_samples_ = 0;
  bool proven_finite_ = false; // of the last compute_gradient's gradient
};

} // namespace troupe::detail
