// One store shard's state: buffers, steps, answers and a push's checks.
#include "actors/store/store_state.hpp"

#include <algorithm>
#include <cstring>

#include "messages/errors.hpp"
#include "model/finite_check.hpp"

namespace troupe {

namespace {

// Names where floats are, for errors: a device's memory or the host's.
std::string memory_name(const std::string& device) {
  return device.empty() ? "host memory" : device + " memory";
}

} // namespace

std::shared_ptr<float> store_state::new_buffer() const {
  if (device)
    return make_device_buffer(device, range.count);
  return std::shared_ptr<float>(new float[range.count], std::default_delete<float[]>());
}

std::shared_ptr<float> store_state::free_buffer() {
  for (auto& buffer : retired)
    if (buffer.use_count() == 1) {
      auto found = std::move(buffer);
      buffer = std::move(retired.back());
      retired.pop_back();
      return found;
    }
  return new_buffer();
}

shared_floats store_state::host_values() {
  if (!device)
    return shared_floats{params, base, range.count};
  if (host_version != version) {
    if (!host_copy || host_copy.use_count() > 1) // an answer still carries the older copy
      host_copy = std::make_shared<std::vector<float>>(range.count);
    device->copy_to_host(host_copy->data(), params.get(), range.count * sizeof(float));
    host_version = version;
  }
  return shared_floats{host_copy};
}

checkpoint_part store_state::part(bool epoch_complete) {
  checkpoint_part c;
  c.shard = settings.shard;
  c.shards = settings.shards;
  c.version = version;
  c.round = policy->next_round();
  c.epoch = epoch;
  c.epoch_round = c.round - epoch_first_round;
  c.epoch_complete = epoch_complete;
  c.optimizer_steps = optim->steps();
  c.params = shared_floats{host_values().to_vector()};
  c.optimizer_state = shared_floats{optim->state()};
  return c;
}

params_msg store_state::answer_value(uint64_t staleness, uint64_t steps_back,
                                     bool device_answer) {
  params_msg msg;
  msg.round = policy->next_round();
  msg.staleness = staleness;
  msg.offset = range.offset;
  msg.losses = policy->losses();
  std::shared_ptr<float> buffer = params;
  msg.version = version;
  if (steps_back > 0 && !history.empty()) {
    const auto& kept = history[history.size() - std::min(history.size(), steps_back)];
    buffer = kept.first;
    msg.version = kept.second;
  }
  if (!device || device_answer) { // a view where it is
    msg.values = shared_floats{std::move(buffer), base, range.count,
                               device ? settings.device : std::string{}};
    msg.values.ready = stepped;
  } else if (buffer == params) { // the host copy of the current version
    msg.values = host_values();
  } else { // an older version, copied to the host for this answer
    std::vector<float> values(range.count);
    device->copy_to_host(values.data(), buffer.get(), range.count * sizeof(float));
    msg.values = shared_floats{std::move(values)};
  }
  return msg;
}

void store_state::round_closed() {
  if (settings.checkpoint_every > 0 && ++rounds_since_checkpoint >= settings.checkpoint_every)
    checkpoint_due = true;
}

void store_state::step_done() {
  if (device) {
    if (history_depth > 0)
      device->finish();
    else
      stepped = device->record_event();
  }
  ++version;
}

void store_state::apply_step(const float* gradient, float lr_scale) {
  make_writable();
  auto verdict = guard_step({weighted_gradient{1.0f, gradient}});
  optim->apply_scaled(step_target(), gradient, lr_scale);
  queue_verdict(std::move(verdict));
  step_done();
}

void store_state::apply_weighted_step(const std::vector<weighted_gradient>& terms) {
  make_writable();
  auto verdict = guard_step(terms);
  optim->apply_weighted_sum(step_target(), terms);
  queue_verdict(std::move(verdict));
  step_done();
}

std::optional<store_state::step_verdict>
store_state::guard_step(const std::vector<weighted_gradient>& terms) {
  if (checked_on_device.empty())
    return std::nullopt;
  if (unchecked) // a policy closing several rounds at once
    (void) check_device_verdict();
  step_verdict verdict;
  std::vector<weighted_gradient> flag_terms;
  for (const auto& term : terms) {
    auto found = checked_on_device.find(term.gradient);
    if (found == checked_on_device.end())
      continue;
    if (auto flag = found->second.flag.lock()) {
      flag_terms.push_back(weighted_gradient{1.0f, flag.get()});
      verdict.flags.emplace_back(found->second, std::move(flag));
    }
    checked_on_device.erase(found);
  }
  if (flag_terms.empty())
    return std::nullopt;
  const float* skip_if = flag_terms.front().gradient;
  if (flag_terms.size() > 1) {
    if (!any_flagged)
      any_flagged = make_device_buffer(device, 1);
    device->weighted_sum(flag_terms, 1, any_flagged.get());
    skip_if = any_flagged.get();
  }
  optim->skip_next_step_if(skip_if); // Adam: the one optimizer on a device
  if (!verdict_slot)
    verdict_slot = make_host_buffer(device, 1);
  verdict.skipped = verdict_slot;
  device->queue_copy_to_host(verdict.skipped.get(), skip_if, sizeof(float));
  return verdict;
}

void store_state::queue_verdict(std::optional<step_verdict> verdict) {
  if (!verdict)
    return;
  verdict->done = device->record_event();
  unchecked = std::move(verdict);
}

caf::error store_state::check_device_verdict() {
  if (refused_on_device || !unchecked)
    return refused_on_device;
  auto verdict = std::move(*unchecked);
  unchecked.reset();
  verdict.done->wait_host();
  if (*verdict.skipped == 0.0f)
    return caf::none;
  std::string culprits;
  for (const auto& [checked, flag] : verdict.flags) {
    float value = 0.0f;
    device->copy_to_host(&value, flag.get(), sizeof(float));
    if (value != 0.0f)
      culprits += (culprits.empty() ? "" : "; ") + ("replica " + std::to_string(checked.replica)
                  + ": its gradient of round " + std::to_string(checked.round)
                  + " contains NaN or Inf");
  }
  refused_on_device = make_troupe_error(troupe_errc::bad_gradient,
                                        culprits + " (store shard "
                                          + std::to_string(settings.shard)
                                          + " did not apply it)");
  return refused_on_device;
}

void store_state::make_writable() {
  if (history_depth > 0) { // the version about to be stepped is kept: step a copy
    history.emplace_back(params, version);
    if (history.size() > history_depth)
      history.pop_front();
  }
  if (in_place) { // into the other buffer: no replica read it in this round
    std::memcpy(spare.get() + base, params.get() + base, range.count * sizeof(float));
    std::swap(params, spare);
  } else if (params.use_count() > 1) {
    // Someone still reads this version: step a copy, in a recycled buffer
    // when one is free (a fresh one page-faults on first touch, or costs a
    // device allocation).
    auto copy = free_buffer();
    const size_t bytes = range.count * sizeof(float);
    if (device)
      device->copy_to_device(copy.get(), params.get(), bytes);
    else
      std::memcpy(copy.get(), params.get(), bytes);
    retired.push_back(std::move(params));
    params = std::move(copy);
  }
}

shared_floats store_state::copy_here(const shared_floats& gradient) {
  auto buffer = uploads->take();
  if (gradient.ready)
    device->wait_for(*gradient.ready);
  device->copy_to_device(buffer.get(), gradient.data(), gradient.size() * sizeof(float));
  if (gradient.on_device())
    device->finish();
  return shared_floats{std::move(buffer), 0, gradient.size(), settings.device};
}

void store_state::answer_from(uint64_t ticket, uint64_t steps_back) {
  auto push = open.find(ticket);
  if (push == open.end())
    return;
  push->second.promise.deliver(
    answer_value(push->second.staleness, steps_back, push->second.device_answer));
  open.erase(push);
}

caf::error store_state::take_gradient(push_msg& push) {
  const size_t size = push.gradient.size();
  if (!(size == range.count || (size == 0 && push.batch_size == 0)))
    return make_troupe_error(troupe_errc::bad_gradient,
                             "gradient from replica " + std::to_string(push.replica)
                               + " has " + std::to_string(size) + " values for store shard "
                               + std::to_string(settings.shard) + ", expected "
                               + std::to_string(range.count));
  if (size == 0)
    return caf::none;
  const std::string here = device ? settings.device : std::string{};
  if (push.gradient.device == here && push.gradient.on_device() && push.gradient.non_finite) {
    checked_on_device[push.gradient.data()] =
      device_checked{push.replica, push.round, push.gradient.non_finite};
    if (push.gradient.ready) // the replica's step may still be writing it
      device->wait_for(*push.gradient.ready);
    return caf::none; // checked on the device: see guard_step
  }
  if (push.gradient.device != here) {
    if (push.gradient.on_device() && device_kind(push.gradient.device) != device_kind(here))
      return make_troupe_error(troupe_errc::bad_gradient,
                               "gradient from replica " + std::to_string(push.replica)
                                 + " is in " + memory_name(push.gradient.device)
                                 + ", which store shard " + std::to_string(settings.shard)
                                 + " in " + memory_name(here) + " cannot read");
    push.gradient = copy_here(push.gradient);
  }
  if (push.proven_finite) // by its replica in this process, from its bounds
    return caf::none;
  if (device ? device->has_non_finite(push.gradient.data(), size)
             : has_non_finite(push.gradient.data(), size))
    return make_troupe_error(troupe_errc::bad_gradient,
                             "gradient from replica " + std::to_string(push.replica)
                               + " contains NaN or Inf");
  return caf::none;
}

} // namespace troupe
