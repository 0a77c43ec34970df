// The built-in MLP behind the troupe::model interface.
#include "model/builtin_model.hpp"

#include <algorithm>

#include "model/backend/cpu/eigen_backend.hpp"
#include "model/parameter_layout.hpp"
#include "model/predict.hpp"
#include "model/source_chunks.hpp"

namespace troupe::detail {

namespace {

batch_result result_of(const batch_stats& stats) {
  return batch_result{stats.loss_sum, stats.correct};
}

} // namespace

builtin_model::builtin_model(model_spec spec)
  : spec_(std::move(spec)), compute_(make_eigen_backend()) {}

builtin_model::builtin_model(model_spec spec, std::shared_ptr<backend> compute,
                             size_t max_batch)
  : spec_(std::move(spec)), compute_(std::move(compute)) {
  net_ = std::make_unique<network>(spec_, *compute_, max_batch);
}

size_t builtin_model::parameter_count() const {
  return parameter_layout(spec_).size();
}

void builtin_model::initialize(uint64_t seed, float* parameters) const {
  const auto values = glorot_uniform_parameters(parameter_layout(spec_), seed);
  std::copy(values.begin(), values.end(), parameters);
}

network& builtin_model::network_for(size_t batch) {
  reserve(batch);
  return *net_;
}

bool builtin_model::reserve(size_t max_batch) {
  if (net_ && net_->max_batch() >= max_batch)
    return false;
  net_ = std::make_unique<network>(spec_, *compute_, std::max(max_batch, size_t{1}));
  return true;
}

batch_result builtin_model::gradient(const float* parameters, const batch& samples,
                                     float* gradient) {
  auto& net = network_for(samples.count);
  net.use_parameters(parameters);
  return result_of(net.compute_gradient(samples.features, samples.labels, samples.count,
                                        gradient, samples.targets, samples.weights,
                                        samples.listener));
}

bool builtin_model::last_gradient_proven_finite() const {
  return net_ && net_->last_gradient_proven_finite();
}

batch_result builtin_model::evaluate(const float* parameters, const batch& samples) {
  // Always chunks of evaluation_rows: the sums' bits depend on the chunks.
  if (!eval_net_)
    eval_net_ = std::make_unique<network>(spec_, *compute_, evaluation_rows);
  eval_net_->use_parameters(parameters);
  return result_of(
    eval_net_->evaluate(samples.features, samples.labels, samples.count, samples.targets));
}

void builtin_model::predict(const float* parameters, const float* features, size_t count,
                            float* outputs) {
  predict_logits(spec_, parameters, features, count, outputs);
  if (spec_.loss == loss_kind::softmax_cross_entropy)
    softmax_rows(outputs, count, spec_.classes());
}

} // namespace troupe::detail
