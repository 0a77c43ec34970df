// Which buffer a shard's step writes, and which ones its answers share.
#include "actors/store/shard_buffers.hpp"

#include <algorithm>
#include <cstring>

#include "model/backend/device_buffers.hpp"

namespace troupe::detail {

shard_buffers::shard_buffers(shard_range range, const float* initial,
                             std::shared_ptr<backend> device, uint32_t history_depth)
  : count_(range.count), device_(std::move(device)), history_depth_(history_depth) {
  params_ = new_buffer();
  if (!device_) {
    std::copy_n(initial, count_, params_.get());
    return;
  }
  device_->copy_to_device(params_.get(), initial, count_ * sizeof(float));
  // Answers carry it until the first step's (a delayed shard's, always): a
  // reader on another stream may not see the upload done otherwise.
  stepped_ = device_->record_event();
}

shard_buffers::shard_buffers(shard_range range, const shared_parameter_buffers& shared,
                             uint32_t history_depth)
  : count_(range.count), base_(range.offset),
    params_(shared.current, shared.current->data()), shared_(true),
    spare_(shared.other, shared.other->data()), shared_wire_(shared.wire),
    history_depth_(history_depth) {
}

std::shared_ptr<float> shard_buffers::new_buffer() const {
  if (device_)
    return make_device_buffer(device_, count_);
  // Not zeroed: a copy fills it.
  return std::shared_ptr<float>(new float[count_], std::default_delete<float[]>());
}

std::shared_ptr<float> shard_buffers::free_buffer() {
  for (auto& buffer : retired_)
    if (buffer.use_count() == 1) {
      auto found = std::move(buffer);
      buffer = std::move(retired_.back());
      retired_.pop_back();
      return found;
    }
  return new_buffer();
}

void shard_buffers::make_writable(uint64_t version) {
  if (history_depth_ > 0) { // the version about to be stepped is kept: step a copy
    history_.emplace_back(params_, version);
    if (history_.size() > history_depth_)
      history_.pop_front();
  }
  if (shared_) { // into the other buffer: no replica read it in this round
    std::memcpy(spare_.get() + base_, params_.get() + base_, count_ * sizeof(float));
    std::swap(params_, spare_);
    stepped_once_ = true;
  } else if (params_.use_count() > 1) {
    // Someone still reads this version: step a copy, in a recycled buffer
    // when one is free (a fresh one page-faults on first touch, or costs a
    // device allocation).
    auto copy = free_buffer();
    const size_t bytes = count_ * sizeof(float);
    if (device_)
      device_->copy_to_device(copy.get(), params_.get(), bytes);
    else
      std::memcpy(copy.get(), params_.get(), bytes);
    retired_.push_back(std::move(params_));
    params_ = std::move(copy);
  }
}

std::optional<shared_floats> shard_buffers::previous() const {
  if (!history_.empty())
    return shared_floats{history_.back().first, base_, count_};
  if (shared_ && stepped_once_)
    return shared_floats{spare_, base_, count_};
  return std::nullopt;
}

void shard_buffers::step_done() {
  if (!device_)
    return;
  // Every policy that steps a push before it answers it lets readers queue
  // behind the step; one that answers from older versions (delayed, with a
  // history) answers first, so the shard waits for its step instead.
  if (history_depth_ > 0)
    device_->finish();
  else
    stepped_ = device_->record_event();
}

std::pair<shared_floats, uint64_t> shard_buffers::view(uint64_t steps_back,
                                                      uint64_t version) const {
  std::shared_ptr<float> buffer = params_;
  if (steps_back > 0 && !history_.empty()) {
    const auto& kept = history_[history_.size() - std::min<size_t>(history_.size(), steps_back)];
    buffer = kept.first;
    version = kept.second;
  }
  return {shared_floats{std::move(buffer), base_, count_}, version};
}

shared_floats shard_buffers::on_host(const shared_floats& view, uint64_t version) {
  if (!device_)
    return view;
  if (view.buffer.get() != params_.get()) { // an older version, copied for this answer
    std::vector<float> values(count_);
    device_->copy_to_host(values.data(), view.data(), count_ * sizeof(float));
    return shared_floats{std::move(values)};
  }
  if (host_version_ != version) {
    if (!host_copy_ || host_copy_.use_count() > 1) // an answer still carries the older copy
      host_copy_ = std::make_shared<std::vector<float>>(count_);
    device_->copy_to_host(host_copy_->data(), params_.get(), count_ * sizeof(float));
    host_version_ = version;
  }
  return shared_floats{host_copy_};
}

shared_floats shard_buffers::on_wire(const shared_floats& view, uint64_t version,
                                     float_codec codec) {
  if (codec == float_codec::fp32)
    return view;
  if (wire_version_ != version || wire_source_ != view.data() || wire_copy_.size() != view.size()) {
    if (shared_wire_ && codec != float_codec::int8 && view.size() == count_) {
      // Replicas read the version before only until their pushes, which
      // this version's step waited for.
      round_into(codec, view.data(), count_, shared_wire_->data() + base_);
      wire_copy_ = shared_floats{shared_wire_, base_, count_};
      wire_copy_.codec = codec;
    } else {
      wire_copy_ = view.rounded(codec);
    }
    wire_version_ = version;
    wire_source_ = view.data();
  }
  return wire_copy_;
}

} // namespace troupe::detail
