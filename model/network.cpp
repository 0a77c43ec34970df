// Forward and backward passes of a dense network, expressed as backend ops.
#include "model/network.hpp"

#include <algorithm>
#include <limits>

#include "model/check.hpp"
#include "model/finite_check.hpp"
#include "model/flush_denormals.hpp"
#include "model/gradient_order.hpp"

namespace troupe::detail {

namespace {

// The device stats a step adds to: loss sum, correct predictions, and a
// flag set when a checked gradient held NaN or Inf.
constexpr size_t stats_floats = network::stats_size;

} // namespace

network::network(const model_spec& spec, backend& compute, size_t max_batch)
  : spec_(spec),
    layout_(spec),
    backend_(&compute),
    max_batch_(std::max<size_t>(max_batch, 1)),
    own_params_(compute, layout_.size()),
    gradient_(compute, layout_.size()),
    input_(compute, max_batch_ * static_cast<size_t>(spec.inputs)),
    labels_(compute, max_batch_),
    stats_(compute, stats_floats) {
  for (const auto& layer : spec_.layers) {
    activations_.emplace_back(compute, max_batch_ * static_cast<size_t>(layer.units));
    deltas_.emplace_back(compute, max_batch_ * static_cast<size_t>(layer.units));
  }
  compute.fill_zero(own_params_.data(), layout_.size() * sizeof(float));
  compute.fill_zero(stats_.data(), stats_floats * sizeof(float));
  params_ = own_params_.data();
}

void network::use_parameters(const float* params) {
  if (backend_->host_memory()) {
    params_ = params;
  } else {
    own_params_.upload(params, layout_.size());
    params_ = own_params_.data();
  }
}

void network::upload_batch(const float* inputs, const int32_t* labels, size_t batch) {
  if (backend_->host_memory()) {
    input_ptr_ = inputs; // read in place: no copy on the CPU
    labels_ptr_ = labels;
    return;
  }
  input_.upload(inputs, batch * static_cast<size_t>(spec_.inputs));
  labels_.upload(labels, batch);
  input_ptr_ = input_.data();
  labels_ptr_ = labels_.data();
}

// Reads input_, writes activations_[l] = act(x_l W_l + b_l); the last holds logits.
void network::forward(size_t batch) {
  const float* x = input_ptr_;
  const int rows = static_cast<int>(batch);
  for (size_t l = 0; l < layout_.layers().size(); ++l) {
    const auto& view = layout_.layers()[l];
    float* y = activations_[l].data();
    // x: (batch, in), w: (in, out), y: (batch, out)
    backend_->gemm(false, false, rows, view.out, view.in, 1.0f, x,
                   params_ + view.weights_offset, 0.0f, y);
    backend_->bias_activation(y, params_ + view.bias_offset, rows, view.out,
                              spec_.layers[l].act);
    x = y;
  }
}

// Starts from deltas_.back() = dloss/dlogits and writes every layer's
// weight and bias gradient into `gradient` (layout order).
void network::backward(size_t batch, float* gradient) {
  const int rows = static_cast<int>(batch);
  for (size_t l = layout_.layers().size(); l-- > 0;) {
    const auto& view = layout_.layers()[l];
    const float* delta = deltas_[l].data();
    // db = column sums of delta: (out); dw = x^T delta: (in, out)
    backend_->bias_gradient(delta, rows, view.out, gradient + view.bias_offset);
    tell_done(view.bias_offset, static_cast<size_t>(view.out));
    weight_gradient(l, rows, gradient);
    if (l == 0)
      break;
    // dx = delta w^T: (batch, in), then through the previous layer's activation.
    float* previous = deltas_[l - 1].data();
    backend_->gemm(false, true, rows, view.in, view.out, 1.0f, delta,
                   params_ + view.weights_offset, 0.0f, previous);
    backend_->activation_backward(previous, activations_[l - 1].data(),
                                  batch * static_cast<size_t>(view.in),
                                  spec_.layers[l - 1].act);
  }
}

// Layer l's dw = x^T delta: the first layer's in blocks of rows, the ones a
// listener wants first before the others (it is the last the pass writes).
void network::weight_gradient(size_t l, int rows, float* gradient) {
  const auto& view = layout_.layers()[l];
  const float* x = l == 0 ? input_ptr_ : activations_[l - 1].data();
  const float* delta = deltas_[l].data();
  float* dw = gradient + view.weights_offset;
  const auto blocks =
    l == 0 && listener_ != nullptr
      ? wanted_rows_first(listener_->wanted_first(), view.weights_offset, view.in, view.out)
      : std::vector<row_block>{row_block{0, view.in}};
  if (blocks.size() == 1) { // no copy of x's columns
    backend_->gemm(true, false, view.in, view.out, rows, 1.0f, x, delta, 0.0f, dw);
    tell_done(view.weights_offset, static_cast<size_t>(view.in) * view.out);
    return;
  }
  for (const row_block block : blocks) {
    weight_gradient_rows(*backend_, x, delta, rows, view.in, view.out, block, dw,
                         row_scratch_);
    tell_done(view.weights_offset + static_cast<size_t>(block.begin) * view.out,
              static_cast<size_t>(block.end - block.begin) * view.out);
  }
}

void network::tell_done(size_t offset, size_t count) {
  if (listener_ != nullptr)
    listener_->done(parameter_span{offset, count});
}

void network::compute_gradient_on_device(const float* inputs, const int32_t* labels,
                                         size_t batch) {
  gradient_into(inputs, labels, batch, gradient_.data());
}

void network::gradient_into(const float* inputs, const int32_t* labels, size_t batch,
                            float* gradient) {
  flush_denormals_scope flush;
  if (batch == 0) {
    backend_->fill_zero(gradient, layout_.size() * sizeof(float));
    return;
  }
  upload_batch(inputs, labels, batch);
  queue_gradient(batch, gradient);
  pending_samples_ += static_cast<int64_t>(batch);
}

void network::queue_staged_gradient(size_t batch) {
  TROUPE_ASSERT(batch > 0 && batch <= max_batch_);
  flush_denormals_scope flush;
  input_ptr_ = input_.data();
  labels_ptr_ = labels_.data();
  queue_gradient(batch, gradient_.data());
}

void network::queue_staged_checked_gradient(size_t batch) {
  queue_staged_gradient(batch);
  backend_->flag_non_finite(gradient_.data(), layout_.size(), stats_.data() + 2);
}

// The step's ops on the batch at input_ptr_ / labels_ptr_: forward, loss and
// its gradient, backward.
void network::queue_gradient(size_t batch, float* gradient) {
  forward(batch);
  loss_step(batch, 1.0f / static_cast<float>(batch), deltas_.back().data());
  if (listener_ != nullptr) // on the host: the stats hold this batch's sums
    listener_->loss_known(
      batch_result{stats_.data()[0], static_cast<int64_t>(stats_.data()[1])});
  backward(batch, gradient);
}

// Adds the loss and hits of the outputs in activations_.back() to stats_
// and, unless dlogits is null, writes scale x their gradient there.
void network::loss_step(size_t batch, float scale, float* dlogits) {
  if (spec_.loss == loss_kind::squared_error) {
    squared_error_step(batch, scale, dlogits);
    return;
  }
  if (weights_ptr_ != nullptr) {
    weighted_cross_entropy_step(batch, scale, dlogits);
    return;
  }
  backend_->softmax_cross_entropy(activations_.back().data(), labels_ptr_,
                                  static_cast<int>(batch), spec_.classes(), scale, dlogits,
                                  stats_.data());
}

// Per sample the mean over outputs of (y - t)^2, as Keras's
// mean_squared_error; its gradient 2 (y - t) / outputs. On the host only.
void network::squared_error_step(size_t batch, float scale, float* doutputs) {
  TROUPE_ASSERT(backend_->host_memory() && targets_ptr_ != nullptr);
  const size_t outputs = static_cast<size_t>(spec_.classes());
  const float* y = activations_.back().data();
  double loss_sum = 0;
  for (size_t r = 0; r < batch; ++r) {
    double row = 0;
    for (size_t c = 0; c < outputs; ++c) {
      const float d = y[r * outputs + c] - targets_ptr_[r * outputs + c];
      row += static_cast<double>(d) * d;
      if (doutputs != nullptr)
        doutputs[r * outputs + c] = 2.0f * d / static_cast<float>(outputs) * scale;
    }
    loss_sum += row / static_cast<double>(outputs);
  }
  stats_.data()[0] += static_cast<float>(loss_sum);
}

// The op row by row, each row's gradient scaled by its weight: with weight 1
// a row's dlogits and loss are the bits the op gives for the whole batch (its
// rows are independent, and it rounds each row's loss to a float before it
// sums them in double). On the host only.
void network::weighted_cross_entropy_step(size_t batch, float scale, float* dlogits) {
  TROUPE_ASSERT(backend_->host_memory());
  const int classes = spec_.classes();
  const float* logits = activations_.back().data();
  double loss_sum = 0;
  float correct = 0;
  for (size_t r = 0; r < batch; ++r) {
    const size_t offset = r * static_cast<size_t>(classes);
    float row[2] = {0.0f, 0.0f}; // the row's loss and hit
    backend_->softmax_cross_entropy(logits + offset, labels_ptr_ + r, 1, classes,
                                    scale * weights_ptr_[r],
                                    dlogits != nullptr ? dlogits + offset : nullptr, row);
    loss_sum += static_cast<double>(weights_ptr_[r]) * static_cast<double>(row[0]);
    correct += row[1];
  }
  stats_.data()[0] += static_cast<float>(loss_sum);
  stats_.data()[1] += correct;
}

batch_stats network::take_stats() {
  float stats[stats_floats];
  stats_.download(stats, stats_floats);
  backend_->fill_zero(stats_.data(), stats_floats * sizeof(float));
  batch_stats result = stats_from(stats);
  result.samples = pending_samples_;
  pending_samples_ = 0;
  return result;
}

void network::queue_take_stats(float* page_locked) {
  backend_->queue_copy_to_host(page_locked, stats_.data(), stats_floats * sizeof(float));
  backend_->fill_zero(stats_.data(), stats_floats * sizeof(float));
}

batch_stats network::stats_from(const float* copied) {
  batch_stats result;
  result.loss_sum = copied[0];
  result.correct = static_cast<int64_t>(copied[1]);
  result.non_finite = copied[2] != 0.0f;
  return result;
}

// Proves, from far fewer floats than the gradient has, that every float of
// it is finite: each layer's weight gradient x^T delta sums `batch` products
// of an input and a delta, its bias gradient `batch` deltas. With every x and
// delta finite and batch * max(1, max|x|) * max|delta| <= FLT_MAX / 4, every
// exact sum is at most FLT_MAX / 4, and rounding (fused or not) grows a sum
// of n <= 2^22 terms by less than (1 + 2^-24)^n < 1.3: none overflows. For
// 784-128relu-10 at 16 rows that reads 17k floats instead of 102k.
bool network::gradient_proven_finite(size_t batch) const {
  constexpr double limit = std::numeric_limits<float>::max() / 4.0;
  if (batch > (size_t{1} << 22))
    return false;
  for (size_t l = 0; l < layout_.layers().size(); ++l) {
    const auto& view = layout_.layers()[l];
    const float* x = l == 0 ? input_ptr_ : activations_[l - 1].data();
    const double largest_x = largest_magnitude(x, batch * static_cast<size_t>(view.in));
    const double largest_delta =
      largest_magnitude(deltas_[l].data(), batch * static_cast<size_t>(view.out));
    // An infinite magnitude (a NaN or Inf among them) fails the test too.
    if (!(static_cast<double>(batch) * std::max(1.0, largest_x) * largest_delta <= limit))
      return false;
  }
  return true;
}

batch_stats network::compute_gradient(const float* inputs, const int32_t* labels,
                                      size_t batch, float* gradient_out,
                                      const float* targets, const float* weights,
                                      gradient_listener* listener) {
  targets_ptr_ = targets;
  TROUPE_ASSERT(weights == nullptr || backend_->host_memory());
  weights_ptr_ = weights;
  if (backend_->host_memory()) {
    listener_ = listener;
    gradient_into(inputs, labels, batch, gradient_out);
    listener_ = nullptr;
    proven_finite_ = batch == 0 || gradient_proven_finite(batch);
  } else {
    proven_finite_ = false;
    gradient_into(inputs, labels, batch, gradient_.data());
    gradient_.download(gradient_out, layout_.size());
  }
  weights_ptr_ = nullptr; // evaluation and the device paths weigh every sample 1
  return take_stats();
}

batch_stats network::evaluate(const float* inputs, const int32_t* labels,
                              size_t count, const float* targets) {
  flush_denormals_scope flush;
  batch_stats total;
  const size_t outputs = static_cast<size_t>(spec_.classes());
  for (size_t begin = 0; begin < count; begin += max_batch_) {
    const size_t batch = std::min(max_batch_, count - begin);
    upload_batch(inputs + begin * spec_.inputs, labels ? labels + begin : nullptr, batch);
    targets_ptr_ = targets ? targets + begin * outputs : nullptr;
    forward(batch);
    loss_step(batch, 0.0f, nullptr);
    pending_samples_ += static_cast<int64_t>(batch);
    total += take_stats();
  }
  return total;
}

} // namespace troupe::detail
