// The replica actor's training loop: compute, push, wait for parameters.
#include "actors/replica/replica_state.hpp"

#include <algorithm>
#include <chrono>
#include <thread>

#include <caf/all.hpp>

#include "actors/replica/push_lanes.hpp"
#include "actors/replica/push_watchdog.hpp"
#include "actors/replica/shard_pushes.hpp"
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

// Computes this replica's share of the round into `push`: on its device
// (hand-over: the gradient stays there) or into a host buffer.
caf::error compute_share(replica_pointer self, const std::vector<uint32_t>& positions,
                         push_msg& push) {
  auto& st = self->state;
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
    const auto plan = plan_ahead(self, push);
    stats = compute.on_host(st.batch_indices, st.params.values.data(),
                            st.first_round + st.next_round, push, plan ? &*plan : nullptr);
  }
  add_stats(st.report, stats);
  push.loss_sum = stats.loss_sum;
  return caf::none;
}

} // namespace

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
  st.out = replica_state::push_out{}; // none of this push's slices has left
  if (st.residual_due) { // before this push's quantizing changes it
    push.residual = st.compute->residual_copy();
    st.residual_due = false;
  }
  if (!positions.empty())
    if (auto err = compute_share(self, positions, push)) {
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
  push_rest(self, push);
  gather_next_round(st);
}

namespace {

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
