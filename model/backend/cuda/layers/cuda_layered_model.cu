// The forward and backward passes of a layered model on one CUDA device, and
// its softmax cross-entropy; per-row losses are summed on the host in row order.
#include "model/backend/cuda/cuda_layered_model.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "model/backend/cuda/cuda_device_context.cuh"
#include "model/backend/cuda/layers/cuda_layer.cuh"
#include "model/backend/cuda/layers/cuda_layer_kernels.cuh"

namespace troupe::detail {

using namespace cuda_detail;

struct cuda_layered_model::state {
  std::unique_ptr<owned_cuda_context> device;
  std::unique_ptr<model> reference; // writes the initial parameters
  stack_spec spec;
  std::vector<std::unique_ptr<cuda_layer>> layers;
  std::vector<size_t> offsets; // layer i's parameters start at offsets[i]; the last: the count
  std::vector<device_buffer<float>> outputs; // each layer's, of the last forward pass
  device_buffer<float> parameters, gradient, features, dlogits, probabilities;
  device_buffer<float> upstream, downstream; // gradients passed between layers
  device_buffer<int32_t> labels, hits;
  device_buffer<uint32_t> indices;
  device_buffer<double> losses;
  std::vector<double> host_losses;
  std::vector<int32_t> host_hits;

  const cuda_context& context() const { return device->get(); }
  int classes() const { return spec.layers.back().units; }
  size_t largest_input() const {
    size_t largest = spec.input.size();
    for (const auto& layer : layers)
      largest = std::max(largest, layer->output_shape().size());
    return largest;
  }

  template <class T>
  void upload(device_buffer<T>& to, const T* from, size_t count) {
    if (count > 0)
      TROUPE_CUDA_CHECK(cudaMemcpyAsync(to.reserve(count), from, count * sizeof(T),
                                        cudaMemcpyHostToDevice, context().stream));
  }

  template <class T>
  void download(T* to, const T* from, size_t count) {
    if (count > 0)
      TROUPE_CUDA_CHECK(cudaMemcpyAsync(to, from, count * sizeof(T), cudaMemcpyDeviceToHost,
                                        context().stream));
  }

  void finish() { TROUPE_CUDA_CHECK(cudaStreamSynchronize(context().stream)); }

  // Copies the parameters and the samples' features (and labels and
  // indices where given) to the device; returns the keys for the pass.
  device_pass_keys upload_batch(const float* host_parameters, const float* host_features,
                                const int32_t* host_labels, const batch* samples, size_t count,
                                bool training) {
    device->make_current();
    upload(parameters, host_parameters, offsets.back());
    upload(features, host_features, count * spec.input.size());
    if (host_labels != nullptr)
      upload(labels, host_labels, count);
    device_pass_keys keys;
    keys.training = training;
    if (samples != nullptr) {
      keys.seed = samples->seed;
      keys.step = samples->step;
      if (samples->indices != nullptr) {
        upload(indices, samples->indices, count);
        keys.indices = indices.get();
      }
    }
    return keys;
  }

  // Runs every layer forward; returns the logits on the device.
  const float* forward(size_t count, const device_pass_keys& keys) {
    const float* x = features.get();
    for (size_t i = 0; i < layers.size(); ++i) {
      float* y = outputs[i].reserve(count * layers[i]->output_shape().size());
      layers[i]->forward(parameters.get() + offsets[i], x, y, count, keys);
      x = y;
    }
    return x;
  }

  void backward(size_t count, const device_pass_keys& keys) {
    float* up = upstream.reserve(count * largest_input());
    float* down = downstream.reserve(count * largest_input());
    const size_t logits = count * classes();
    TROUPE_CUDA_CHECK(cudaMemcpyAsync(up, dlogits.get(), logits * sizeof(float),
                                      cudaMemcpyDeviceToDevice, context().stream));
    for (size_t i = layers.size(); i-- > 0;) {
      const float* x = i == 0 ? features.get() : outputs[i - 1].get();
      layers[i]->backward(parameters.get() + offsets[i], x, outputs[i].get(), up,
                          i > 0 ? down : nullptr, gradient.get() + offsets[i], count, keys);
      std::swap(up, down);
    }
  }

  // Sums the rows' losses and hits the softmax left on the device, in row order.
  batch_result take_results(size_t count) {
    host_losses.resize(count);
    host_hits.resize(count);
    download(host_losses.data(), losses.get(), count);
    download(host_hits.data(), hits.get(), count);
    finish();
    batch_result result;
    for (size_t n = 0; n < count; ++n) {
      result.loss_sum += host_losses[n];
      result.correct += host_hits[n];
    }
    return result;
  }
};

cuda_layered_model::cuda_layered_model(std::unique_ptr<state> s) : state_(std::move(s)) {}

cuda_layered_model::~cuda_layered_model() {
  if (state_ == nullptr)
    return;
  state_->device->make_current();
  state_->layers.clear();
  state_->outputs.clear();
}

int cuda_layered_model::inputs() const { return static_cast<int>(state_->spec.input.size()); }
int cuda_layered_model::outputs() const { return state_->classes(); }
size_t cuda_layered_model::parameter_count() const { return state_->offsets.back(); }

void cuda_layered_model::initialize(uint64_t seed, float* parameters) const {
  state_->reference->initialize(seed, parameters);
}

std::vector<parameter_span> cuda_layered_model::state_spans() const {
  return state_->reference->state_spans();
}

batch_result cuda_layered_model::gradient(const float* parameters, const batch& samples,
                                          float* gradient) {
  state& s = *state_;
  const size_t count = samples.count;
  if (count == 0) {
    std::fill_n(gradient, parameter_count(), 0.0f);
    return {};
  }
  const auto keys =
    s.upload_batch(parameters, samples.features, samples.labels, &samples, count, true);
  const float* logits = s.forward(count, keys);
  const int classes = s.classes();
  launch_softmax_rows(s.context().stream, logits, s.labels.get(), count, classes,
                      1.0f / static_cast<float>(count), nullptr,
                      s.dlogits.reserve(count * classes), s.losses.reserve(count),
                      s.hits.reserve(count));
  s.gradient.reserve(parameter_count());
  s.backward(count, keys);
  s.download(gradient, s.gradient.get(), parameter_count());
  return s.take_results(count);
}

batch_result cuda_layered_model::evaluate(const float* parameters, const batch& samples) {
  state& s = *state_;
  const size_t count = samples.count;
  if (count == 0)
    return {};
  const auto keys =
    s.upload_batch(parameters, samples.features, samples.labels, &samples, count, false);
  const float* logits = s.forward(count, keys);
  launch_softmax_rows(s.context().stream, logits, s.labels.get(), count, s.classes(), 1.0f,
                      nullptr, nullptr, s.losses.reserve(count), s.hits.reserve(count));
  return s.take_results(count);
}

void cuda_layered_model::predict(const float* parameters, const float* features, size_t count,
                                 float* outputs) {
  state& s = *state_;
  if (count == 0)
    return;
  const auto keys = s.upload_batch(parameters, features, nullptr, nullptr, count, false);
  const float* logits = s.forward(count, keys);
  const size_t values = count * static_cast<size_t>(s.classes());
  float* probabilities = s.probabilities.reserve(values);
  launch_softmax_rows(s.context().stream, logits, nullptr, count, s.classes(), 1.0f,
                      probabilities, nullptr, nullptr, nullptr);
  s.download(outputs, probabilities, values);
  s.finish();
}

void cuda_layered_model::logits(const float* parameters, const float* features, size_t count,
                                float* logits) {
  state& s = *state_;
  if (count == 0)
    return;
  const auto keys = s.upload_batch(parameters, features, nullptr, nullptr, count, false);
  s.download(logits, s.forward(count, keys), count * static_cast<size_t>(s.classes()));
  s.finish();
}

expected<std::unique_ptr<cuda_layered_model>>
make_cuda_layered_model(const stack_spec& spec, std::unique_ptr<model> reference,
                        int device_index) {
  for (size_t i = 0; i < spec.layers.size(); ++i)
    if (!has_cuda_twin(spec.layers[i].kind))
      return fail(errc::invalid_argument,
                  "layer " + std::to_string(i) + " has no CUDA implementation");
  auto device = open_cuda_context(device_index);
  if (!device)
    return device.error();
  auto s = std::make_unique<cuda_layered_model::state>();
  s->device = std::move(*device);
  s->reference = std::move(reference);
  s->spec = spec;
  s->offsets.push_back(0);
  tensor_shape shape = spec.input;
  for (const auto& l : spec.layers) {
    s->layers.push_back(make_cuda_layer(l, shape, s->context()));
    shape = s->layers.back()->output_shape();
    s->offsets.push_back(s->offsets.back() + s->layers.back()->parameter_count());
  }
  s->outputs = std::vector<device_buffer<float>>(spec.layers.size());
  if (s->offsets.back() != s->reference->parameter_count())
    return fail(errc::invalid_argument,
                "the CUDA stack has " + std::to_string(s->offsets.back()) +
                  " parameters where the host's has " +
                  std::to_string(s->reference->parameter_count()));
  return std::make_unique<cuda_layered_model>(std::move(s));
}

} // namespace troupe::detail
