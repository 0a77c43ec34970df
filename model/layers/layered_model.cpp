// The forward and backward passes of a layered model, and its loss.
#include "model/layers/layered_model.hpp"

#include <algorithm>
#include <cmath>

#include "model/random.hpp"

namespace troupe::detail {

namespace {

// Writes each row's softmax of `logits` (count, classes) into `probabilities`
// and returns the summed cross-entropy against `labels` (when given), with
// how many rows' first largest logit is the label.
batch_result softmax_rows(const float* logits, const int32_t* labels, size_t count,
                          int classes, float* probabilities) {
  batch_result result;
  for (size_t n = 0; n < count; ++n) {
    const float* row = logits + n * classes;
    const int top = static_cast<int>(std::max_element(row, row + classes) - row);
    double sum = 0;
    for (int k = 0; k < classes; ++k)
      sum += std::exp(static_cast<double>(row[k]) - row[top]);
    for (int k = 0; k < classes; ++k)
      probabilities[n * classes + k] =
        static_cast<float>(std::exp(static_cast<double>(row[k]) - row[top]) / sum);
    if (labels == nullptr)
      continue;
    result.loss_sum += std::log(sum) + row[top] - row[labels[n]];
    result.correct += top == labels[n] ? 1 : 0;
  }
  return result;
}

pass_keys keys_of(const batch& samples, bool training) {
  return pass_keys{samples.seed, samples.step, samples.indices, training};
}

} // namespace

layered_model::layered_model(stack_spec spec, std::vector<std::unique_ptr<layer_op>> ops)
  : spec_(std::move(spec)), ops_(std::move(ops)) {
  offsets_.push_back(0);
  for (const auto& op : ops_)
    offsets_.push_back(offsets_.back() + op->parameter_count());
  outputs_.resize(ops_.size());
}

void layered_model::initialize(uint64_t seed, float* parameters) const {
  for (size_t i = 0; i < ops_.size(); ++i)
    ops_[i]->initialize(mix_seed(seed, 0x6c61796572ull, i), parameters + offsets_[i]); // "layer"
}

std::vector<parameter_span> layered_model::state_spans() const {
  std::vector<parameter_span> spans;
  for (size_t i = 0; i < ops_.size(); ++i)
    if (const size_t state = ops_[i]->state_count(); state > 0)
      spans.push_back(parameter_span{offsets_[i + 1] - state, state});
  return spans;
}

const float* layered_model::forward(const float* parameters, const float* features,
                                    size_t count, const pass_keys& keys) {
  const float* x = features;
  for (size_t i = 0; i < ops_.size(); ++i) {
    outputs_[i].resize(count * ops_[i]->output_shape().size());
    ops_[i]->forward(parameters + offsets_[i], x, outputs_[i].data(), count, keys);
    x = outputs_[i].data();
  }
  return x;
}

batch_result layered_model::gradient(const float* parameters, const batch& samples,
                                     float* gradient) {
  const size_t count = samples.count;
  const pass_keys keys = keys_of(samples, true);
  const float* logits = forward(parameters, samples.features, count, keys);
  const int classes = outputs();
  dlogits_.resize(count * classes);
  const batch_result result =
    softmax_rows(logits, samples.labels, count, classes, dlogits_.data());
  const float scale = count > 0 ? 1.0f / static_cast<float>(count) : 0.0f;
  for (size_t n = 0; n < count; ++n) {
    float* row = dlogits_.data() + n * classes;
    row[samples.labels[n]] -= 1.0f;
    for (int k = 0; k < classes; ++k)
      row[k] *= scale;
  }
  upstream_ = dlogits_;
  gradient_listener* listener = samples.listener;
  if (listener != nullptr)
    listener->loss_known(result);
  for (size_t i = ops_.size(); i-- > 0;) {
    const float* x = i == 0 ? samples.features : outputs_[i - 1].data();
    float* dx = nullptr;
    if (i > 0) {
      downstream_.resize(outputs_[i - 1].size());
      dx = downstream_.data();
    }
    ops_[i]->backward(parameters + offsets_[i], x, outputs_[i].data(), upstream_.data(), dx,
                      gradient + offsets_[i], count, keys);
    if (listener != nullptr && ops_[i]->parameter_count() > 0)
      listener->done(parameter_span{offsets_[i], ops_[i]->parameter_count()});
    std::swap(upstream_, downstream_);
  }
  return result;
}

batch_result layered_model::evaluate(const float* parameters, const batch& samples) {
  const float* logits =
    forward(parameters, samples.features, samples.count, keys_of(samples, false));
  dlogits_.resize(samples.count * outputs());
  return softmax_rows(logits, samples.labels, samples.count, outputs(), dlogits_.data());
}

void layered_model::predict(const float* parameters, const float* features, size_t count,
                            float* outputs) {
  const float* logits = forward(parameters, features, count, pass_keys{});
  softmax_rows(logits, nullptr, count, this->outputs(), outputs);
}

void layered_model::logits(const float* parameters, const float* features, size_t count,
                           float* logits) {
  const float* last = forward(parameters, features, count, pass_keys{});
  std::copy_n(last, count * static_cast<size_t>(outputs()), logits);
}

expected<std::unique_ptr<layered_model>> make_layered_stack(const std::string& text) {
  auto spec = parse_stack_spec(text);
  if (!spec)
    return spec.error();
  auto ops = make_layer_ops(*spec);
  if (!ops)
    return ops.error();
  return std::make_unique<layered_model>(std::move(*spec), std::move(*ops));
}

expected<std::unique_ptr<model>> make_layered_model(const std::string& text) {
  auto stack = make_layered_stack(text);
  if (!stack)
    return stack.error();
  return std::unique_ptr<model>(std::move(*stack));
}

} // namespace troupe::detail
