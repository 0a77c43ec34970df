// The optimizer that leaves a model's state to the round's mean.
#include "model/optim/averaged_state.hpp"

#include <algorithm>

namespace troupe::detail {

namespace {

class averaged_state final : public optimizer {
public:
  averaged_state(std::unique_ptr<optimizer> inner, std::vector<parameter_span> spans)
    : inner_(std::move(inner)), spans_(std::move(spans)) {}

  void apply_scaled(float* weights, const float* gradient, float lr_scale) override {
    keep(weights);
    inner_->apply_scaled(weights, gradient, lr_scale);
    size_t kept = 0;
    for (const parameter_span& span : spans_)
      for (size_t i = span.offset; i < span.offset + span.count; ++i)
        weights[i] = kept_[kept++] - gradient[i];
  }

  void apply_weighted_sum(float* weights,
                          const std::vector<weighted_gradient>& terms) override {
    keep(weights);
    inner_->apply_weighted_sum(weights, terms);
    size_t kept = 0;
    for (const parameter_span& span : spans_) {
      mean_.resize(span.count);
      weighted_gradient_sum(terms, span.offset, span.count, mean_.data());
      for (size_t i = 0; i < span.count; ++i)
        weights[span.offset + i] = kept_[kept++] - mean_[i];
    }
  }

  void set_learning_rate_factor(float factor) override {
    inner_->set_learning_rate_factor(factor);
  }
  void set_weights_shared(bool shared) override { inner_->set_weights_shared(shared); }
  uint64_t steps() const override { return inner_->steps(); }
  std::vector<float> state() const override { return inner_->state(); }
  bool restore(const std::vector<float>& state, uint64_t steps) override {
    return inner_->restore(state, steps);
  }
  size_t size() const override { return inner_->size(); }

private:
  // The state's values before the inner step, which moves every float.
  void keep(const float* weights) {
    kept_.clear();
    for (const parameter_span& span : spans_)
      kept_.insert(kept_.end(), weights + span.offset, weights + span.offset + span.count);
  }

  std::unique_ptr<optimizer> inner_;
  std::vector<parameter_span> spans_;
  std::vector<float> kept_, mean_;
};

} // namespace

std::unique_ptr<optimizer> with_averaged_state(std::unique_ptr<optimizer> inner,
                                               std::vector<parameter_span> spans) {
  if (spans.empty())
    return inner;
  return std::make_unique<averaged_state>(std::move(inner), std::move(spans));
}

std::vector<parameter_span> spans_within(const std::vector<parameter_span>& spans,
                                         size_t offset, size_t count) {
  std::vector<parameter_span> within;
  for (const parameter_span& span : spans) {
    const size_t begin = std::max(span.offset, offset);
    const size_t end = std::min(span.offset + span.count, offset + count);
    if (begin < end)
      within.push_back(parameter_span{begin - offset, end - begin});
  }
  return within;
}

} // namespace troupe::detail
