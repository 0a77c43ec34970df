// A replica's recorded step on its device.
#include "actors/device_step.hpp"

#include <utility>

namespace troupe {

device_step::device_step(std::shared_ptr<backend> compute, std::string device)
  : compute_(std::move(compute)), device_(std::move(device)) {}

// The shards' steps may still run on their streams: queue behind them, then
// copy every slice into the network's own buffer (device to device, from
// another device, or from the host for a shard that answered there). The
// recorded step reads that buffer, whose address never changes.
void device_step::use_parts(network& net, const std::vector<params_msg>& parts) {
  for (const auto& part : parts)
    if (part.values.ready)
      compute_->wait_for(*part.values.ready);
  for (const auto& part : parts)
    compute_->copy_to_device(net.device_parameters() + part.offset, part.values.data(),
                             part.values.size() * sizeof(float));
  net.use_device_parameters();
}

// One recording per batch size (a round's share, and a short last round's),
// replayed from then on; on a device that cannot record, the ops are queued
// one by one.
void device_step::queue_gradient(network& net, size_t samples) {
  auto* loop = compute_->resident_ops();
  if (loop == nullptr || cannot_record_) {
    net.queue_staged_checked_gradient(samples);
    return;
  }
  auto found = recorded_.find(samples);
  if (found == recorded_.end()) {
    auto recorded = loop->record([&net, samples] { net.queue_staged_checked_gradient(samples); });
    if (!recorded) {
      cannot_record_ = true;
      net.queue_staged_checked_gradient(samples);
      return;
    }
    found = recorded_.emplace(samples, std::move(*recorded)).first;
  }
  found->second->replay();
}

batch_stats device_step::run(network& net, const std::vector<params_msg>& parts,
                             const float* host_params, const float* images,
                             const int32_t* labels, size_t samples, shared_floats& gradient) {
  const size_t count = net.layout().size();
  if (!gradients_)
    gradients_ = std::make_unique<device_buffer_pool>(compute_, count);
  auto buffer = gradients_->take();
  if (parts.empty())
    net.use_parameters(host_params); // uploads into the network's own buffer
  else
    use_parts(net, parts);
  const size_t inputs = static_cast<size_t>(net.spec().inputs);
  compute_->copy_to_device(net.staged_images(), images, samples * inputs * sizeof(float));
  compute_->copy_to_device(net.staged_labels(), labels, samples * sizeof(int32_t));
  queue_gradient(net, samples);
  // The store holds the gradient until its step has read it: it goes to a
  // buffer of the pool, and the network's own is free for the next step.
  compute_->copy_to_device(buffer.get(), net.device_gradient(), count * sizeof(float));
  auto stats = net.take_stats(); // waits for the step: the gradient is complete
  stats.samples = static_cast<int64_t>(samples);
  gradient = shared_floats{std::move(buffer), 0, count, device_};
  return stats;
}

} // namespace troupe
