// A replica's share of a round: gathered, then computed by its model.
#include "actors/replica/share_compute.hpp"

#include <algorithm>
#include <string>

#include "actors/replica/slices_ahead.hpp"
#include "messages/errors.hpp"
#include "messages/int8_blocks.hpp"
#include "model/class_weights.hpp"
#include "model/data/source_registry.hpp"

namespace troupe::detail {

share_compute::share_compute(std::shared_ptr<replica_setup> setup) : setup_(std::move(setup)) {
  size_rows(rows_);
}

void share_compute::size_rows(batch_rows& rows) const {
  const size_t samples = setup_->max_batch;
  rows.images.resize(samples * static_cast<size_t>(setup_->inputs));
  rows.labels.resize(samples);
  rows.targets.resize(samples * static_cast<size_t>(setup_->train->target_width()));
}

caf::error share_compute::bad_data(const std::string& why) const {
  return make_troupe_error(troupe_errc::bad_data,
                           "replica " + std::to_string(setup_->config.index) + ": " + why);
}

// A re-planned round can give a replica more samples than its share at start.
void share_compute::reserve(size_t samples) {
  auto& setup = *setup_;
  if (samples <= setup.max_batch)
    return;
  if (setup.device && setup.device->reserve(samples) && on_device_)
    on_device_->reset();
  setup.max_batch = samples;
  size_rows(rows_);
}

caf::error share_compute::gather(const std::vector<uint32_t>& indices) {
  if (ahead_ready_ && ahead_.indices == indices) {
    std::swap(rows_, ahead_);
    ahead_ready_ = false;
    return rows_.error;
  }
  ahead_ready_ = false;
  return gather_into(rows_, indices);
}

void share_compute::gather_ahead(const std::vector<uint32_t>& indices) {
  ahead_.error = gather_into(ahead_, indices);
  ahead_.indices = indices;
  ahead_ready_ = true;
}

caf::error share_compute::gather_into(batch_rows& rows, const std::vector<uint32_t>& indices) {
  reserve(indices.size());
  const size_t count = indices.size();
  if (rows.labels.size() < count)
    size_rows(rows);
  const data_source& train = *setup_->train;
  const bool regression = train.regression();
  train.gather(indices.data(), count, rows.images.data(),
               regression ? nullptr : rows.labels.data(),
               regression ? rows.targets.data() : nullptr);
  if (regression) {
    std::fill_n(rows.labels.begin(), count, 0);
    return caf::none;
  }
  if (auto checked = check_gathered_labels(train, indices.data(), rows.labels.data(), count);
      !checked)
    return bad_data(checked.error().message);
  if (const auto& weights = setup_->config.class_weights; !weights.empty()) {
    rows.weights.resize(count);
    sample_weights(weights, rows.labels.data(), count, rows.weights.data());
  }
  return caf::none;
}

shared_floats share_compute::residual_copy() const {
  if (residual_.empty())
    return shared_floats{std::vector<float>(setup_->store.parameter_count, 0.0f)};
  return shared_floats{residual_};
}

caf::expected<shared_floats> share_compute::residual_before(uint64_t round) const {
  if (residual_round_ == no_push || residual_round_ < round)
    return residual_copy(); // its push of `round` is still to come
  if (residual_round_ == round)
    return shared_floats{residual_before_};
  return make_troupe_error(troupe_errc::bad_config,
                           "the residual from before round " + std::to_string(round)
                             + " is gone: this replica pushed round "
                             + std::to_string(residual_round_) + " already");
}

batch_stats share_compute::on_host(const std::vector<uint32_t>& indices,
                                   const float* parameters, uint64_t round, push_msg& push,
                                   const ahead_plan* plan) {
  auto& setup = *setup_;
  const size_t count = setup.store.parameter_count;
  if (!host_gradients_)
    host_gradients_ =
      std::make_unique<device_buffer_pool>(setup.compute, count, buffer_memory::host);
  auto buffer = host_gradients_->take();
  float* const values = buffer.get();
  const float_codec codec = setup.config.wire;
  // The view exists before the model runs: slices sent ahead are views of it.
  push.gradient = shared_floats{std::move(buffer), 0, count};
  push.gradient.codec = codec;
  batch samples{rows_.images.data(), rows_.labels.data(), indices.size(), setup.inputs,
                setup.train->regression() ? rows_.targets.data() : nullptr,
                setup.config.class_weights.empty() ? nullptr : rows_.weights.data()};
  samples.indices = indices.data();
  samples.step = round;
  samples.seed = setup.config.seed;
  std::optional<slices_ahead> ahead;
  if (plan != nullptr && codec != float_codec::int8) {
    ahead.emplace(setup.store.ranges, *plan, codec, values);
    samples.listener = &*ahead;
  }
  const batch_result result = setup.model->gradient(parameters, samples, values);
  // The push's rounding (--wire), in place: the only pass over the gradient
  // before it is handed to the shards (a slice sent ahead was rounded then).
  if (codec == float_codec::int8) {
    residual_.resize(count); // zeros at the first push: a new replica has no residual
    residual_before_.resize(count);
    residual_.swap(residual_before_);
    push.gradient.int8 = std::make_shared<int8_values>(
      quantize_with_feedback(values, residual_before_.data(), residual_.data(), count));
    residual_round_ = round;
  } else if (ahead) {
    const auto& ranges = setup.store.ranges;
    for (size_t k = 0; k < ranges.size(); ++k)
      if (!ahead->sent(k))
        round_in_place(codec, values + ranges[k].offset, ranges[k].count);
  } else {
    round_in_place(codec, values, count);
  }
  // A finite float may round to Inf (past fp16's largest): then the shard reads it.
  if (setup.device && codec == float_codec::fp32)
    push.proven_finite = setup.device->last_gradient_proven_finite();
  return batch_stats{result.loss_sum, result.correct, static_cast<int64_t>(indices.size())};
}

caf::expected<batch_stats> share_compute::on_device(const std::vector<uint32_t>& indices,
                                                    const std::vector<params_msg>& parts,
                                                    const float* host_parameters,
                                                    push_msg& push) {
  auto& setup = *setup_;
  reserve(indices.size());
  if (!on_device_)
    on_device_ = std::make_unique<device_step>(setup.compute, setup.config.device, setup.inputs,
                                               setup.store.parameter_count);
  auto ran = on_device_->run(*setup.device, *setup.train, indices, parts, host_parameters,
                             push.device_gradient);
  if (!ran)
    return bad_data(ran.error().message);
  return *ran;
}

batch_stats share_compute::drain() {
  return on_device_ ? on_device_->drain() : batch_stats{};
}

} // namespace troupe::detail
