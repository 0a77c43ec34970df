// A replica's recorded step on its device.
#include "actors/replica/device_step.hpp"

#include <utility>

#include "model/data/source_registry.hpp"

namespace troupe::detail {

device_step::device_step(std::shared_ptr<backend> compute, std::string device, int inputs,
                         size_t parameter_count)
  : compute_(std::move(compute)),
    device_(std::move(device)),
    inputs_(static_cast<size_t>(inputs)),
    parameter_count_(parameter_count) {}

// The shards' steps may still run on their streams: queue behind them, then
// copy every slice into the model's own buffer (device to device, from
// another device, or from the host for a shard that answered there). The
// recorded step reads that buffer, whose address never changes.
void device_step::use_parts(device_capability& model, const std::vector<params_msg>& parts) {
  for (const auto& part : parts)
    if (part.device_values.ready)
      compute_->wait_for(*part.device_values.ready);
  for (const auto& part : parts) {
    const auto& values = part.device_values ? part.device_values.floats : part.values;
    compute_->copy_to_device(model.device_parameters() + part.offset, values.data(),
                             values.size() * sizeof(float));
  }
  model.use_device_parameters();
}

// One recording per batch size (a round's share, and a short last round's),
// replayed from then on; on a device that cannot record, the ops are queued
// one by one.
void device_step::queue_gradient(device_capability& model, size_t samples) {
  auto* loop = compute_->resident_ops();
  if (loop == nullptr || cannot_record_) {
    model.queue_staged_checked_gradient(samples);
    return;
  }
  auto found = recorded_.find(samples);
  if (found == recorded_.end()) {
    auto recorded =
      loop->record([&model, samples] { model.queue_staged_checked_gradient(samples); });
    if (!recorded) {
      cannot_record_ = true;
      model.queue_staged_checked_gradient(samples);
      return;
    }
    found = recorded_.emplace(samples, std::move(*recorded)).first;
  }
  found->second->replay();
}

status device_step::stage_batch(staging_slot& slot, device_capability& model,
                                const data_source& data, const std::vector<uint32_t>& indices) {
  const size_t rows = indices.size();
  if (rows > slot.rows) {
    slot.inputs = make_host_buffer(compute_, rows * inputs_);
    slot.labels = make_host_buffer(compute_, rows); // sizeof(int32_t) == sizeof(float)
    slot.rows = rows;
  }
  if (!slot.stats)
    slot.stats = make_host_buffer(compute_, device_capability::stats_size);
  auto* labels = reinterpret_cast<int32_t*>(slot.labels.get());
  data.gather(indices.data(), rows, slot.inputs.get(), labels, nullptr);
  if (auto checked = check_gathered_labels(data, indices.data(), labels, rows); !checked)
    return checked;
  compute_->copy_to_device(model.staged_inputs(), slot.inputs.get(),
                           rows * inputs_ * sizeof(float));
  compute_->copy_to_device(model.staged_labels(), labels, rows * sizeof(int32_t));
  return {};
}

batch_stats device_step::drain() {
  if (!last_)
    return {};
  if (last_->done)
    last_->done->wait_host();
  batch_stats stats = device_capability::stats_from(last_->stats.get());
  stats.samples = last_->samples;
  last_.reset();
  return stats;
}

expected<batch_stats> device_step::run(device_capability& model, const data_source& data,
                                       const std::vector<uint32_t>& indices,
                                       const std::vector<params_msg>& parts,
                                       const float* host_params, device_floats& gradient) {
  const size_t samples = indices.size();
  const size_t count = parameter_count_;
  if (!gradients_)
    gradients_ = std::make_unique<device_buffer_pool>(compute_, count + 1);
  auto buffer = gradients_->take();
  if (parts.empty())
    model.use_parameters(host_params); // uploads into the model's own buffer
  else
    use_parts(model, parts);
  staging_slot& slot = slots_[next_slot_];
  next_slot_ = 1 - next_slot_;
  if (auto staged = stage_batch(slot, model, data, indices); !staged)
    return staged.error();
  queue_gradient(model, samples);
  // The store holds the gradient until its step has read it: it goes to a
  // buffer of the pool, with the check's flag after it, and the model's
  // own buffers are free for the next step.
  compute_->copy_to_device(buffer.get(), model.device_gradient(), count * sizeof(float));
  compute_->copy_to_device(buffer.get() + count, model.device_non_finite_flag(), sizeof(float));
  model.queue_take_stats(slot.stats.get());
  auto done = compute_->record_event();
  gradient = device_floats{shared_floats{buffer, 0, count}, device_, done,
                           std::shared_ptr<const float>(buffer, buffer.get() + count)};
  // The device now has this step queued behind the one before: waiting for
  // that one leaves it busy.
  batch_stats before = drain();
  last_ = step_in_flight{slot.stats, std::move(done), static_cast<int64_t>(samples)};
  return before;
}

} // namespace troupe::detail
