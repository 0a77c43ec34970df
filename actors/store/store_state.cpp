// One store shard's state: steps, answers and a push's checks.
#include "actors/store/store_state.hpp"

#include <algorithm>

#include "messages/errors.hpp"
#include "model/finite_check.hpp"

namespace troupe::detail {

namespace {

// Names where floats are, for errors: a device's memory or the host's.
std::string memory_name(const std::string& device) {
  return device.empty() ? "host memory" : device + " memory";
}

} // namespace

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
  c.params = shared_floats{buffers->on_host(buffers->view(0, version).first, version).to_vector()};
  c.optimizer_state = shared_floats{optim->state()};
  c.membership = settings.membership;
  c.learning_rate_factor = settings.learning_rate_factor;
  return c;
}

params_msg store_state::answer_value(uint64_t staleness, uint64_t steps_back,
                                     bool device_answer, std::optional<uint64_t> delta_base) {
  params_msg msg = value_of(staleness, steps_back, device_answer);
  if (msg.values.size() > 0) {
    msg.values = buffers->on_wire(msg.values, msg.version, parameter_codec(settings.wire));
    bases.code(msg, delta_base);
  }
  return msg;
}

params_msg store_state::value_of(uint64_t staleness, uint64_t steps_back, bool device_answer) {
  params_msg msg;
  msg.round = policy->next_round();
  msg.staleness = staleness;
  msg.offset = range.offset;
  msg.losses = policy->report().losses;
  msg.membership = settings.membership;
  auto [values, at_version] = buffers->view(steps_back, version);
  msg.version = at_version;
  if (device_answer && device())
    msg.device_values = device_floats{std::move(values), settings.device, buffers->ready(), {}};
  else
    msg.values = buffers->on_host(values, version);
  return msg;
}

void store_state::in_order(std::function<void()> op) {
  if (gate)
    gate->in_order(std::move(op));
  else
    op();
}

void store_state::round_closed() {
  in_order([this] { round_closed_now(); });
}

void store_state::round_closed_now() {
  if (settings.checkpoint_every > 0 && ++rounds_since_checkpoint >= settings.checkpoint_every)
    checkpoint_due = true;
  if (settings.snapshot_every > 0 && ++rounds_since_snapshot >= settings.snapshot_every)
    snapshot_due = true;
  const uint64_t next = policy->next_round();
  for (auto it = awaited.begin(); it != awaited.end();) {
    if (it->first >= next) {
      ++it;
      continue;
    }
    it->second.deliver(next);
    it = awaited.erase(it);
  }
}

template <class Step>
void store_state::step(const std::vector<weighted_gradient>& terms, Step run) {
  buffers->make_writable(version);
  if (verdicts)
    verdicts->guarded(terms, *optim, run);
  else
    run();
  buffers->step_done();
  ++version;
}

void store_state::clipped_step(std::vector<float> gradient, float lr_scale) {
  auto run = [this, lr_scale](float* clipped) {
    step({weighted_gradient{1.0f, clipped}},
         [&] { optim->apply_scaled(buffers->step_target(), clipped, lr_scale); });
  };
  if (!gate) { // no rounds: the push's own norm
    scale_gradient(gradient.data(), gradient.size(),
                   global_clip_scale(push_norm, settings.optimizer.global_clipnorm));
    run(gradient.data());
    return;
  }
  const uint64_t round = policy->next_round(); // the round closing now
  const square_sum own = sum_of_squares(gradient.data(), gradient.size());
  if (send_sum)
    send_sum(round, own);
  gate->step(round, std::move(gradient), own, run);
}

void store_state::apply_step(const float* gradient, float lr_scale) {
  const float clipnorm = settings.optimizer.global_clipnorm;
  // Without rounds a push the clip leaves as it is steps without a copy.
  if (clipnorm > 0.0f && (gate || global_clip_scale(push_norm, clipnorm) != 1.0f)) {
    std::vector<float> copy = gate ? gate->buffer(range.count) : std::vector<float>(range.count);
    std::copy_n(gradient, range.count, copy.data());
    clipped_step(std::move(copy), lr_scale);
    return;
  }
  step({weighted_gradient{1.0f, gradient}},
       [&] { optim->apply_scaled(buffers->step_target(), gradient, lr_scale); });
}

void store_state::apply_weighted_step(const std::vector<weighted_gradient>& terms) {
  if (settings.optimizer.global_clipnorm > 0.0f) {
    std::vector<float> mean = gate ? gate->buffer(range.count) : std::vector<float>(range.count);
    weighted_gradient_sum(terms, 0, mean.size(), mean.data());
    clipped_step(std::move(mean), 1.0f);
    return;
  }
  step(terms, [&] { optim->apply_weighted_sum(buffers->step_target(), terms); });
}

void store_state::answer_from(uint64_t ticket, uint64_t steps_back) {
  in_order([this, ticket, steps_back] { answer_now(ticket, steps_back); });
}

void store_state::answer_now(uint64_t ticket, uint64_t steps_back) {
  auto push = open.find(ticket);
  if (push == open.end())
    return;
  auto answer = answer_value(push->second.staleness, steps_back, push->second.device_answer,
                             push->second.delta_base);
  answer.cut = cuts_with_residuals() && cut_due_at_close();
  push->second.promise.deliver(std::move(answer));
  open.erase(push);
}

void store_state::refuse_open(troupe_errc code, const std::string& reason) {
  in_order([this, code, reason] { refuse_open_now(code, reason); });
}

void store_state::refuse_open_now(troupe_errc code, const std::string& reason) {
  const auto refusal = make_troupe_error(code, reason);
  for (auto& entry : open)
    entry.second.promise.deliver(refusal);
  open.clear();
}

void store_state::take_back(const open_push& push) {
  stats.samples -= push.samples;
  stats.loss_sum -= push.loss_sum;
  --stats.pushes;
}

void store_state::refuse(uint64_t ticket, troupe_errc code, const std::string& reason) {
  in_order([this, ticket, code, reason] { refuse_now(ticket, code, reason); });
}

void store_state::refuse_now(uint64_t ticket, troupe_errc code, const std::string& reason) {
  auto push = open.find(ticket);
  if (push == open.end())
    return;
  take_back(push->second);
  push->second.promise.deliver(make_troupe_error(code, reason));
  open.erase(push);
}

void store_state::answer_unused(uint64_t ticket) {
  in_order([this, ticket] {
    auto push = open.find(ticket);
    if (push == open.end())
      return;
    take_back(push->second);
    answer_now(ticket, 0);
  });
}

caf::expected<params_msg> store_state::answer_at(uint64_t wanted) {
  if (wanted == version)
    return masters_value();
  auto before = buffers->previous();
  if (wanted + 1 != version || !before || device())
    return make_troupe_error(troupe_errc::bad_config,
                             "store shard " + std::to_string(settings.shard)
                               + " holds version " + std::to_string(version) + ", not "
                               + std::to_string(wanted));
  params_msg msg = masters_value();
  msg.version = wanted;
  msg.round = msg.round - 1;
  msg.values = std::move(*before);
  return msg;
}

shared_floats store_state::copy_here(const float* source, size_t count,
                                     const device_event* ready, bool from_device) {
  auto buffer = uploads->take();
  if (ready)
    device()->wait_for(*ready);
  device()->copy_to_device(buffer.get(), source, count * sizeof(float));
  if (from_device)
    device()->finish();
  return shared_floats{std::move(buffer), 0, count};
}

caf::error store_state::take_device_gradient(push_msg& push) {
  auto& gradient = push.device_gradient;
  const std::string here = device() ? settings.device : std::string{};
  if (device_kind(gradient.device) != device_kind(here))
    return make_troupe_error(troupe_errc::bad_gradient,
                             "gradient from replica " + std::to_string(push.replica) + " is in "
                               + memory_name(gradient.device) + ", which store shard "
                               + std::to_string(settings.shard) + " in " + memory_name(here)
                               + " cannot read");
  if (gradient.device != here) { // another device of this kind: copied, then checked here
    push.gradient = copy_here(gradient.floats.data(), gradient.floats.size(),
                              gradient.ready.get(), true);
    gradient = device_floats{};
    return check_finite(push);
  }
  if (gradient.ready) // the replica's step may still be writing it
    device()->wait_for(*gradient.ready);
  const bool checked_there = gradient.non_finite != nullptr;
  if (checked_there)
    verdicts->note_checked(gradient, push.replica, push.round); // see device_verdicts
  push.gradient = std::move(gradient.floats);
  gradient = device_floats{};
  return checked_there ? caf::none : check_finite(push);
}

caf::error store_state::check_finite(const push_msg& push) const {
  if (push.proven_finite) // by its replica in this process, from its bounds
    return caf::none;
  const float* values = push.gradient.data();
  const size_t size = push.gradient.size();
  if (device() ? device()->has_non_finite(values, size) : has_non_finite(values, size))
    return make_troupe_error(troupe_errc::bad_gradient,
                             "gradient from replica " + std::to_string(push.replica)
                               + " contains NaN or Inf");
  return caf::none;
}

caf::error store_state::check_codec(const push_msg& push) const {
  const auto& gradient = push.gradient;
  const std::string from = "gradient from replica " + std::to_string(push.replica)
                           + " for round " + std::to_string(push.round);
  if (!gradient.fault.empty())
    return make_troupe_error(troupe_errc::bad_gradient,
                             from + " arrived malformed: " + gradient.fault);
  if (gradient.size() > 0 && gradient.codec != settings.wire)
    return make_troupe_error(troupe_errc::bad_gradient,
                             from + " came as " + codec_name(gradient.codec) + ", but the run's "
                               + "--wire is " + codec_name(settings.wire));
  // int8 blocks are counted from parameter 0: a slice must say where it starts.
  if (gradient.size() > 0 && gradient.codec == float_codec::int8
      && (!gradient.int8 || gradient.first_parameter() != range.offset))
    return make_troupe_error(troupe_errc::bad_gradient,
                             from + " arrived malformed: its int8 values start at parameter "
                               + std::to_string(gradient.first_parameter()) + ", store shard "
                               + std::to_string(settings.shard) + "'s range at "
                               + std::to_string(range.offset));
  return caf::none;
}

caf::error store_state::take_gradient(push_msg& push) {
  if (auto err = check_codec(push))
    return err;
  const size_t size = push.device_gradient ? push.device_gradient.floats.size()
                                           : push.gradient.size();
  if (!(size == range.count || (size == 0 && push.batch_size == 0)))
    return make_troupe_error(troupe_errc::bad_gradient,
                             "gradient from replica " + std::to_string(push.replica)
                               + " has " + std::to_string(size) + " values for store shard "
                               + std::to_string(settings.shard) + ", expected "
                               + std::to_string(range.count));
  if (size == 0)
    return caf::none;
  if (push.device_gradient)
    return take_device_gradient(push);
  if (device())
    push.gradient = copy_here(push.gradient.data(), size, nullptr, false);
  return check_finite(push);
}

} // namespace troupe::detail
