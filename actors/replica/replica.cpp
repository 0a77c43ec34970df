// The replica actor's training loop: compute, push, wait for parameters.
#include "actors/replica/replica_state.hpp"

#include <algorithm>
#include <chrono>
#include <thread>

#include <caf/all.hpp>

#include "actors/replica/wire_codings.hpp"
#include "actors/replica/gather.hpp"
#include "actors/replica/push_lanes.hpp"
#include "actors/replica/push_watchdog.hpp"
#include "actors/replica/replica.hpp"
#include "actors/replica/store_group.hpp"
#include "actors/runtime/core_pinning.hpp"
#include "actors/runtime/node_fault.hpp"
#include "actors/runtime/trace_clock.hpp"
#include "messages/errors.hpp"
#include "model/data/batch_plan.hpp"
#include "model/optim/global_norm.hpp"

namespace troupe::detail {

namespace {

using clock_type = replica_state::clock_type;

double seconds_between(clock_type::time_point from, clock_type::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

// Re-plans the rest of the epoch for replicas the store reported lost since
// the last answer (sync): their unprocessed share moves to the survivors.
void apply_losses(replica_state& st) {
  const auto& losses = st.params.losses;
  for (; st.losses_applied < losses.size(); ++st.losses_applied) {
    const replica_loss& loss = losses[st.losses_applied];
    if (loss.round < st.first_round)
      continue; // an earlier epoch's loss: already out of this epoch's schedule
    if (loss.round - st.first_round >= st.schedule->rounds())
      continue; // after this epoch's last round: the next epoch re-plans it
    st.schedule->lose(static_cast<size_t>(loss.round - st.first_round), loss.replica,
                      loss.share_used);
  }
}

// The error a replica answers its epoch order with when its push to store
// shard `shard` (of `shards`) failed: the store's own refusal keeps its code
// (bad_gradient, stale_round, ...); CAF's request errors become the Troupe
// code they mean (the shard did not answer in time, or is gone), naming the
// shard; anything else is passed on as it is. `what` names the push for a
// person.
caf::error push_failure(const caf::error& err, const std::string& what, size_t shard,
                        size_t shards) {
  const std::string which =
    "store shard " + std::to_string(shard) + " of " + std::to_string(shards);
  if (err.category() == caf::atom("troupe"))
    return make_troupe_error(static_cast<troupe_errc>(err.code()), what + describe(err));
  if (err == caf::sec::request_timeout)
    return make_troupe_error(troupe_errc::timeout,
                             what + which + " did not answer: " + describe(err));
  if (err == caf::sec::request_receiver_down)
    return make_troupe_error(troupe_errc::store_lost, what + which + " is gone");
  return err;
}

// Writes the samples at `positions` of this epoch's permutation to `out`.
void samples_at(const replica_state& st, const std::vector<uint32_t>& positions,
                std::vector<uint32_t>& out) {
  out.clear();
  for (auto position : positions)
    out.push_back(st.order[position]);
}

// Gathers the samples of this replica's next round while its push is out:
// the copy, and the source's loading of those rows, leave the round's path
// from the answers to the next push (a loss that re-plans that round
// wastes only the copy).
void gather_next_round(replica_state& st) {
  if (st.setup->device_handover || st.next_round + 1 >= st.schedule->rounds())
    return;
  const auto start = clock_type::now();
  std::vector<uint32_t> samples;
  samples_at(st, st.schedule->positions(st.next_round + 1, st.setup->config.index), samples);
  if (samples.empty())
    return;
  st.compute->gather_ahead(samples);
  if (st.setup->config.trace)
    st.report.trace.push_back(make_trace_span(
      trace_kind::gather, st.first_round + st.next_round + 1, start, clock_type::now()));
}

void add_stats(replica_report& report, const batch_stats& stats) {
  report.samples += static_cast<uint64_t>(stats.samples);
  report.loss_sum += stats.loss_sum;
  report.correct += static_cast<uint64_t>(stats.correct);
}

void run_round(replica_pointer self);

// Computes this replica's share of the round into `push`: on its device
// (hand-over: the gradient stays there) or into a host buffer.
caf::error compute_share(replica_state& st, const std::vector<uint32_t>& positions,
                         push_msg& push) {
  samples_at(st, positions, st.batch_indices);
  auto& compute = *st.compute;
  batch_stats stats;
  if (st.setup->device_handover) {
    // The stats of the step before: this one runs on while the replica
    // pushes it. The shards check its gradient on the device (device_floats).
    auto ran = compute.on_device(st.batch_indices, st.device_parts, st.params.values.data(),
                                 push);
    if (!ran)
      return ran.error();
    stats = *ran;
  } else {
    if (auto err = compute.gather(st.batch_indices))
      return err;
    stats = compute.on_host(st.batch_indices, st.params.values.data(),
                            st.first_round + st.next_round, push);
  }
  add_stats(st.report, stats);
  push.loss_sum = stats.loss_sum;
  return caf::none;
}

// An answer whose parameters were read off the wire malformed, or could not
// be joined, named.
caf::error malformed_answer(const replica_state& st, const std::vector<params_msg>& parts) {
  if (!st.join_fault.empty())
    return make_troupe_error(troupe_errc::bad_gradient,
                             "replica " + std::to_string(st.setup->config.index) + ": "
                               + st.join_fault + " (round "
                               + std::to_string(st.first_round + st.next_round) + ")");
  for (size_t k = 0; k < parts.size(); ++k)
    if (!parts[k].values.fault.empty())
      return make_troupe_error(troupe_errc::bad_gradient,
                               "replica " + std::to_string(st.setup->config.index)
                                 + ": the answer of store shard " + std::to_string(k)
                                 + " to round " + std::to_string(st.first_round + st.next_round)
                                 + " arrived malformed: " + parts[k].values.fault);
  return caf::none;
}

// Takes the shards' answers to push `serial` and runs the next round.
void take_answers(replica_pointer self, uint64_t serial, std::vector<params_msg>& parts) {
  auto& st = self->state;
  if (!st.waiting || serial != st.pushes)
    return; // the watchdog gave up on this push already
  st.waiting = false;
  if (auto err = malformed_answer(st, parts)) {
    st.promise.deliver(std::move(err));
    return;
  }
  const auto answered = clock_type::now();
  st.residual_due = std::any_of(parts.begin(), parts.end(),
                                [](const params_msg& part) { return part.cut; });
  st.report.wait_seconds += seconds_between(st.pushed_at, answered);
  if (st.setup->config.trace)
    st.report.trace.push_back(make_trace_span(trace_kind::wait, st.first_round + st.next_round,
                                              st.pushed_at, answered));
  if (st.joins_as_answers_come) {
    st.params = joined_in(parts, st.joined);
  } else if (st.setup->device_handover) { // used on the device by the next compute
    st.params = params_msg{};
    st.params.version = parts.front().version;
    st.params.round = parts.front().round;
    st.params.staleness = parts.front().staleness;
    st.params.losses = std::move(parts.front().losses);
    st.device_parts = std::move(parts);
  } else {
    st.params = join_params(parts, st.setup->store.parameter_count, st.joined);
  }
  ++st.next_round;
  run_round(self);
}

// Copies a shard's answer to push `serial` into the joined parameters as it
// comes, when the shards do not all share one buffer with this replica.
void join_as_it_comes(replica_pointer self, uint64_t serial, size_t k, const params_msg& part) {
  auto& st = self->state;
  if (!st.joins_as_answers_come || !st.waiting || serial != st.pushes
      || !part.values.fault.empty())
    return;
  const auto start = clock_type::now();
  join_shard_answer(st, k, part);
  if (st.setup->config.trace)
    st.report.trace.push_back(make_trace_span(trace_kind::join, st.first_round + st.next_round,
                                              start, clock_type::now()));
}

// Sends each shard its slice of the gradient (a view of the same buffer)
// and waits for every answer. No timeout per request: each would wake CAF's
// clock thread twice per push; the watchdog bounds the wait instead.
void push_to_shards(replica_pointer self, const push_msg& push) {
  auto& st = self->state;
  const uint64_t serial = ++st.pushes;
  st.waiting = true;
  if (st.joins_as_answers_come) // writable before the first answer comes
    prepare_join(st);
  arm_watchdog(self);
  const auto& store = st.setup->store;
  gather<params_msg>(
    store.shards.size(),
    [self, &store, &push](size_t k) {
      const auto [offset, count] = store.ranges[k];
      push_msg slice = push;
      if (push.gradient.size() > 0)
        slice.gradient = push.gradient.slice(offset, count);
      if (push.device_gradient)
        slice.device_gradient = push.device_gradient.slice(offset, count);
      if (push.residual.size() > 0)
        slice.residual = push.residual.slice(offset, count);
      mask_push_zeros(self, k, slice);
      ask_delta(self, k, slice);
      return self->request(store.push_route(k), caf::infinite, push_atom::value,
                           std::move(slice));
    },
    [self, serial](size_t k, const params_msg& part) { join_as_it_comes(self, serial, k, part); },
    [self, serial](std::vector<params_msg>& parts) { take_answers(self, serial, parts); },
    [self, serial](size_t k, caf::error& err) {
      auto& st = self->state;
      if (!st.waiting || serial != st.pushes)
        return;
      st.waiting = false;
      st.promise.deliver(push_failure(err,
                                      "replica " + std::to_string(st.setup->config.index)
                                        + ": push of round "
                                        + std::to_string(st.first_round + st.next_round)
                                        + " failed: ",
                                      k, st.setup->store.shards.size()));
    });
}

void run_round(replica_pointer self) {
  auto& st = self->state;
  const auto& cfg = st.setup->config;
  apply_losses(st);
  if (st.next_round >= st.schedule->rounds()) {
    add_stats(st.report, st.compute->drain());
    if (cfg.wire == float_codec::int8 && !st.compute->residual().empty())
      st.report.residual = shared_floats{st.compute->residual()};
    st.promise.deliver(st.report);
    return;
  }
  const auto start = clock_type::now();
  const auto positions = st.schedule->positions(st.next_round, cfg.index);
  push_msg push;
  push.replica = cfg.index;
  push.round = st.first_round + st.next_round;
  push.base_version = st.params.version;
  push.batch_size = static_cast<uint32_t>(positions.size());
  push.membership = cfg.membership;
  if (st.residual_due) { // before this push's quantizing changes it
    push.residual = st.compute->residual_copy();
    st.residual_due = false;
  }
  if (!positions.empty())
    if (auto err = compute_share(st, positions, push)) {
      st.promise.deliver(std::move(err));
      return;
    }
  if (cfg.gradient_norm && push.gradient.size() > 0) // clipping without rounds
    push.gradient_norm = sum_of_squares(push.gradient.data(), push.gradient.size()).norm();
  push.device_answer = st.setup->device_handover;
  // Let go of the parameters: the store can then step them in place.
  st.params.values = shared_floats{};
  st.device_parts.clear();
  if (cfg.slowdown > 1.0f) // a straggler by request: (F - 1) x this step's compute
    std::this_thread::sleep_for(std::chrono::duration<double>(
      (cfg.slowdown - 1.0f) * seconds_between(start, clock_type::now())));
  st.pushed_at = clock_type::now();
  st.report.compute_seconds += seconds_between(start, st.pushed_at);
  if (cfg.trace)
    st.report.trace.push_back(
      make_trace_span(trace_kind::compute, push.round, start, st.pushed_at));
  ++st.report.pushes;
  if (cfg.fault_signal != 0 && push.round == cfg.fault_round)
    fire_node_fault(cfg.fault_signal);
  push_to_shards(self, push);
  gather_next_round(st);
}

// Ends the replica with its store: a node must not keep replicas of a
// coordinator that died. Any shard's end is the store's.
void watch_store(replica_pointer self) {
  for (const auto& shard : self->state.setup->store.shards)
    self->monitor(shard);
  self->set_down_handler([self](caf::down_msg& msg) {
    const auto& shards = self->state.setup->store.shards;
    for (size_t k = 0; k < shards.size(); ++k)
      if (msg.source == shards[k].address()) {
        // A job that ended well shuts its shards down as well as this actor.
        if (msg.reason == caf::exit_reason::user_shutdown) {
          self->quit(caf::exit_reason::user_shutdown);
          return;
        }
        self->quit(make_troupe_error(troupe_errc::store_lost,
                                     "store shard " + std::to_string(k) + " of "
                                       + std::to_string(shards.size())
                                       + " is gone: " + describe(msg.reason)));
        return;
      }
  });
}

// Starts the epoch an order asks for, answered once its last round is pushed.
caf::result<replica_report> start_epoch(replica_pointer self, epoch_order& order) {
  auto& st = self->state;
  const auto& cfg = st.setup->config;
  if (order.membership != cfg.membership)
    return make_troupe_error(troupe_errc::fenced,
                             "replica " + std::to_string(cfg.index)
                               + " of membership epoch " + std::to_string(cfg.membership)
                               + " refuses an epoch order for epoch "
                               + std::to_string(order.membership));
  if (order.residual.size() > 0) {
    if (order.residual.size() != st.setup->store.parameter_count)
      return make_troupe_error(troupe_errc::bad_config,
                               "replica " + std::to_string(cfg.index) + ": an int8 residual of "
                                 + std::to_string(order.residual.size()) + " values for "
                                 + std::to_string(st.setup->store.parameter_count)
                                 + " parameters");
    st.compute->set_residual(order.residual.to_vector());
  }
  st.promise = self->make_response_promise<replica_report>();
  st.params = std::move(order.params);
  // An order carries the shards' fp32 masters; the replica computes on them
  // rounded to the run's codec, as on every answer to its pushes.
  st.params.values = st.params.values.rounded(parameter_codec(cfg.wire));
  st.device_parts.clear();
  st.first_round = st.params.round - order.start_round;
  st.order = epoch_permutation(st.setup->train->size(), cfg.seed, order.epoch);
  // Replicas lost in earlier epochs no longer take part.
  std::vector<uint32_t> live;
  for (uint32_t r = 0; r < cfg.replicas; ++r)
    live.push_back(r);
  // (Losses from this epoch's first round on are applied by apply_losses.)
  for (const replica_loss& loss : st.params.losses)
    if (loss.round < st.first_round)
      live.erase(std::remove(live.begin(), live.end(), loss.replica), live.end());
  st.losses_applied = 0;
  st.schedule = std::make_unique<epoch_schedule>(st.order.size(), cfg.global_batch, live);
  st.next_round = order.start_round;
  st.report = replica_report{};
  st.report.replica = cfg.index;
  st.report.membership = cfg.membership;
  run_round(self);
  return st.promise;
}

} // namespace

replica_actor::behavior_type replica_behavior(replica_pointer self,
                                              std::shared_ptr<replica_setup> setup) {
  auto& st = self->state;
  st.setup = std::move(setup);
  if (replica_needs_own_thread(st.setup->config)) { // detached: the thread is its own
    if (st.setup->config.pin_core)
      pin_this_thread(st.setup->config.index);
    schedule_as_batch_thread();
  }
  st.compute = std::make_unique<share_compute>(st.setup);
  watch_store(self);
  open_push_lanes(self);
  const auto& shards = st.setup->store.shards;
  st.joins_as_answers_come =
    !st.setup->device_handover
    && std::any_of(shards.begin(), shards.end(),
                   [self](const store_actor& shard) { return shard->node() != self->node(); });
  return {
    [self](epoch_atom, epoch_order& order) { return start_epoch(self, order); },
    [self](ready_atom) -> uint32_t { return self->state.setup->config.index; },
    [self](residual_atom, uint64_t round) -> caf::result<shared_floats> {
      auto residual = self->state.compute->residual_before(round);
      if (!residual)
        return residual.error();
      return std::move(*residual);
    },
    [self](residual_atom) -> caf::result<uint64_t, shared_floats, shared_floats> {
      const auto& compute = *self->state.compute;
      const uint64_t last = compute.last_push_round();
      auto before = compute.residual_before(last);
      self->quit(caf::exit_reason::user_shutdown); // moved: a new actor goes on
      return {last, before ? std::move(*before) : shared_floats{}, compute.residual_copy()};
    },
    [self](tick_atom) { check_watchdog(self); },
  };
}

} // namespace troupe::detail
