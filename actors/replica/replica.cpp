// The replica actor's training loop: compute, push, wait for parameters.
#include "actors/replica/replica.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <thread>

#include <caf/all.hpp>

#include "actors/runtime/core_pinning.hpp"
#include "actors/replica/data_cache.hpp"
#include "actors/replica/device_step.hpp"
#include "actors/replica/gather.hpp"
#include "actors/replica/replica_setup.hpp"
#include "actors/runtime/node_fault.hpp"
#include "actors/replica/store_group.hpp"
#include "actors/runtime/trace_clock.hpp"
#include "messages/errors.hpp"
#include "model/optim/global_norm.hpp"
#include "model/backend/device_buffers.hpp"
#include "model/class_weights.hpp"
#include "model/data/batch_plan.hpp"
#include "model/data/epoch_schedule.hpp"
#include "model/data/source_registry.hpp"
#include "model/model_description.hpp"
#include "model/network.hpp"

namespace troupe {

namespace {

using clock_type = std::chrono::steady_clock;

double seconds_between(clock_type::time_point from, clock_type::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

struct replica_state {
  static inline const char* name = "troupe.replica";

  std::shared_ptr<replica_setup> setup;
  params_msg params;
  // Where the shards' slices of the parameters are joined when they are not
  // views of one buffer already (shards in other processes, async shards).
  std::shared_ptr<std::vector<float>> joined;
  // Gradient buffers in host memory the backend copies fastest (page-locked
  // for a GPU), reused once the store lets go of them. The store may still
  // hold the last one for a moment after answering (or, delayed, until its
  // round closes), so a few rotate, as many as are in flight.
  std::unique_ptr<device_buffer_pool> host_gradients;
  // With device hand-over: its steps, and the shards' last answers (views
  // of their device buffers), held until the next push: the replica's reads
  // of them have finished by then (it waits for its step's loss), and a
  // shard steps in place only once none holds them.
  std::unique_ptr<device_step> on_device;
  std::vector<params_msg> device_parts;
  std::vector<float> batch_images;
  std::vector<int32_t> batch_labels;
  std::vector<float> batch_targets; // a regression set's
  std::vector<float> batch_weights; // each sample's class weight (--class-weights)
  std::vector<uint32_t> order;                  // this epoch's permutation
  std::unique_ptr<epoch_schedule> schedule;
  size_t losses_applied = 0;                    // entries of params.losses seen
  std::vector<uint32_t> batch_indices;
  size_t next_round = 0;                        // position in this epoch
  uint64_t first_round = 0;                     // the store's round at epoch start
  uint64_t pushes = 0;                          // over the replica's life
  bool waiting = false;                         // for the answers to push `pushes`
  bool watchdog_armed = false;                  // a tick is on its way
  replica_report report;
  caf::typed_response_promise<replica_report> promise;
  clock_type::time_point pushed_at;
};

using replica_pointer = replica_actor::stateful_pointer<replica_state>;

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

// The error a replica answers its epoch order with when a push failed: the
// store's own refusal keeps its code (bad_gradient, stale_round, ...); CAF's
// request errors become the Troupe code they mean (the store did not answer
// in time, or is gone); anything else is passed on as it is. `what` names the
// push for a person.
caf::error push_failure(const caf::error& err, const std::string& what) {
  if (err.category() == caf::atom("troupe"))
    return make_troupe_error(static_cast<troupe_errc>(err.code()), what + describe(err));
  if (err == caf::sec::request_timeout)
    return make_troupe_error(troupe_errc::timeout, what + describe(err));
  if (err == caf::sec::request_receiver_down)
    return make_troupe_error(troupe_errc::store_lost, what + describe(err));
  return err;
}

// The batch's targets, or null for a classification set.
const float* targets_of(const replica_state& st) {
  return st.setup->train->regression() ? st.batch_targets.data() : nullptr;
}

// The batch's sample weights, or null where every sample weighs 1.
const float* weights_of(const replica_state& st) {
  return st.setup->config.class_weights.empty() ? nullptr : st.batch_weights.data();
}

// Computes this round's gradient into a host buffer (the network copies it
// there from a device) for `push`, with whether the network proved it finite.
batch_stats compute_on_host(replica_state& st, size_t samples_count, push_msg& push) {
  auto& setup = *st.setup;
  const size_t count = setup.store.parameter_count;
  if (!st.host_gradients)
    st.host_gradients =
      std::make_unique<device_buffer_pool>(setup.compute, count, buffer_memory::host);
  auto buffer = st.host_gradients->take();
  if (setup.custom) {
    batch samples{st.batch_images.data(), st.batch_labels.data(), samples_count,
                  setup.inputs, targets_of(st), weights_of(st)};
    samples.indices = st.batch_indices.data();
    samples.step = st.first_round + st.next_round;
    samples.seed = setup.config.seed;
    const batch_result result = setup.custom->gradient(st.params.values.data(), samples,
                                                       buffer.get());
    push.gradient = shared_floats{std::move(buffer), 0, count};
    return batch_stats{result.loss_sum, result.correct, static_cast<int64_t>(samples_count)};
  }
  setup.net->use_parameters(st.params.values.data());
  auto stats = setup.net->compute_gradient(st.batch_images.data(), st.batch_labels.data(),
                                           samples_count, buffer.get(), targets_of(st),
                                           weights_of(st));
  push.gradient = shared_floats{std::move(buffer), 0, count};
  push.proven_finite = setup.net->last_gradient_proven_finite();
  return stats;
}

// Writes the samples at `positions` of this epoch's permutation to `out`.
void samples_at(const replica_state& st, const std::vector<uint32_t>& positions,
                std::vector<uint32_t>& out) {
  out.clear();
  for (auto position : positions)
    out.push_back(st.order[position]);
}

// Starts loading the images of this replica's next round, which the round
// it computes now leaves time for (a hint: a loss that re-plans that round
// wastes only the hint).
void prefetch_next_round(const replica_state& st) {
  if (st.next_round + 1 >= st.schedule->rounds())
    return;
  std::vector<uint32_t> samples;
  samples_at(st, st.schedule->positions(st.next_round + 1, st.setup->config.index), samples);
  st.setup->train->prefetch(samples.data(), samples.size());
}

// A re-planned round can give a replica more samples than its share at start.
void grow_batch_buffers(replica_state& st, size_t samples) {
  auto& setup = *st.setup;
  if (setup.net)
    setup.net = std::make_unique<network>(setup.net->spec(), *setup.compute, samples);
  if (st.on_device)
    st.on_device->reset();
  setup.max_batch = samples;
  st.batch_images.resize(samples * static_cast<size_t>(setup.inputs));
  st.batch_labels.resize(samples);
  st.batch_targets.resize(samples * static_cast<size_t>(setup.train->target_width()));
}

std::chrono::milliseconds step_timeout(const replica_state& st) {
  return std::chrono::milliseconds(st.setup->config.step_timeout_ms);
}

// Keeps one tick on its way while the replica waits for answers, every
// quarter step timeout: a push unanswered for a step timeout fails within
// 1.25 step timeouts.
void arm_watchdog(replica_pointer self) {
  auto& st = self->state;
  if (st.watchdog_armed)
    return;
  st.watchdog_armed = true;
  const auto period = std::max(step_timeout(st) / 4, std::chrono::milliseconds{1});
  self->delayed_send(replica_actor{self}, period, tick_atom::value);
}

void check_watchdog(replica_pointer self) {
  auto& st = self->state;
  st.watchdog_armed = false;
  if (!st.waiting)
    return; // rearmed by the next push
  if (clock_type::now() - st.pushed_at < step_timeout(st)) {
    arm_watchdog(self);
    return;
  }
  st.waiting = false;
  st.promise.deliver(make_troupe_error(
    troupe_errc::timeout, "replica " + std::to_string(st.setup->config.index) + ": push of round "
                            + std::to_string(st.first_round + st.next_round)
                            + " failed: no answer from the store within "
                            + std::to_string(st.setup->config.step_timeout_ms) + " ms"));
}

void add_stats(replica_report& report, const batch_stats& stats) {
  report.samples += static_cast<uint64_t>(stats.samples);
  report.loss_sum += stats.loss_sum;
  report.correct += static_cast<uint64_t>(stats.correct);
}

void run_round(replica_pointer self);

// Copies the samples of this share into the batch buffers; a label the
// source gave out of range is bad data.
caf::error gather_share(replica_state& st, size_t count) {
  const data_source& train = *st.setup->train;
  const bool regression = train.regression();
  train.gather(st.batch_indices.data(), count, st.batch_images.data(),
               regression ? nullptr : st.batch_labels.data(),
               regression ? st.batch_targets.data() : nullptr);
  if (regression) {
    std::fill_n(st.batch_labels.begin(), count, 0);
    return caf::none;
  }
  if (auto checked = check_gathered_labels(train, st.batch_indices.data(),
                                           st.batch_labels.data(), count);
      !checked)
    return make_troupe_error(troupe_errc::bad_data,
                             "replica " + std::to_string(st.setup->config.index) + ": "
                               + checked.error().message);
  if (const auto& weights = st.setup->config.class_weights; !weights.empty()) {
    st.batch_weights.resize(count);
    sample_weights(weights, st.batch_labels.data(), count, st.batch_weights.data());
  }
  return caf::none;
}

// Computes this replica's share of the round into `push`: on its device
// (hand-over: the gradient stays there) or into a host buffer.
caf::error compute_share(replica_state& st, const std::vector<uint32_t>& positions,
                         push_msg& push) {
  const auto& cfg = st.setup->config;
  if (positions.size() > st.setup->max_batch)
    grow_batch_buffers(st, positions.size());
  samples_at(st, positions, st.batch_indices);
  batch_stats stats;
  if (st.setup->device_handover) {
    if (!st.on_device)
      st.on_device = std::make_unique<device_step>(st.setup->compute, cfg.device);
    // The stats of the step before: this one runs on while the replica
    // pushes it. The shards check its gradient on the device (device_floats).
    auto ran = st.on_device->run(*st.setup->net, *st.setup->train, st.batch_indices,
                                 st.device_parts, st.params.values.data(), push.device_gradient);
    if (!ran)
      return make_troupe_error(troupe_errc::bad_data, "replica " + std::to_string(cfg.index)
                                                        + ": " + ran.error().message);
    stats = *ran;
  } else {
    if (auto err = gather_share(st, positions.size()))
      return err;
    prefetch_next_round(st);
    stats = compute_on_host(st, positions.size(), push);
  }
  add_stats(st.report, stats);
  push.loss_sum = stats.loss_sum;
  return caf::none;
}

// Takes the shards' answers to push `serial` and runs the next round.
void take_answers(replica_pointer self, uint64_t serial, std::vector<params_msg>& parts) {
  auto& st = self->state;
  if (!st.waiting || serial != st.pushes)
    return; // the watchdog gave up on this push already
  st.waiting = false;
  const auto answered = clock_type::now();
  st.report.wait_seconds += seconds_between(st.pushed_at, answered);
  if (st.setup->config.trace)
    st.report.trace.push_back(make_trace_span(trace_kind::wait, st.first_round + st.next_round,
                                              st.pushed_at, answered));
  if (st.setup->device_handover) { // used on the device by the next compute
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

// Sends each shard its slice of the gradient (a view of the same buffer)
// and waits for every answer. No timeout per request: each would wake CAF's
// clock thread twice per push; the watchdog bounds the wait instead.
void push_to_shards(replica_pointer self, const push_msg& push) {
  auto& st = self->state;
  const uint64_t serial = ++st.pushes;
  st.waiting = true;
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
      return self->request(store.shards[k], caf::infinite, push_atom::value, std::move(slice));
    },
    [self, serial](std::vector<params_msg>& parts) { take_answers(self, serial, parts); },
    [self, serial](caf::error& err) {
      auto& st = self->state;
      if (!st.waiting || serial != st.pushes)
        return;
      st.waiting = false;
      st.promise.deliver(push_failure(err, "replica " + std::to_string(st.setup->config.index)
                                             + ": push of round "
                                             + std::to_string(st.first_round + st.next_round)
                                             + " failed: "));
    });
}

void run_round(replica_pointer self) {
  auto& st = self->state;
  const auto& cfg = st.setup->config;
  apply_losses(st);
  if (st.next_round >= st.schedule->rounds()) {
    if (st.on_device)
      add_stats(st.report, st.on_device->drain());
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
}

replica_actor::behavior_type replica(replica_pointer self,
                                     std::shared_ptr<replica_setup> setup) {
  auto& st = self->state;
  st.setup = std::move(setup);
  if (replica_needs_own_thread(st.setup->config)) { // detached: the thread is its own
    if (st.setup->config.pin_core)
      pin_this_thread(st.setup->config.index);
    schedule_as_batch_thread();
  }
  st.batch_images.resize(st.setup->max_batch * static_cast<size_t>(st.setup->inputs));
  st.batch_labels.resize(st.setup->max_batch);
  st.batch_targets.resize(st.setup->max_batch
                          * static_cast<size_t>(st.setup->train->target_width()));
  // Without its store a replica has nothing to do: a node must not keep
  // replicas of a coordinator that died. Any shard's end is the store's.
  for (const auto& shard : st.setup->store.shards)
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
  return {
    [self](epoch_atom, epoch_order& order) -> caf::result<replica_report> {
      auto& st = self->state;
      const auto& cfg = st.setup->config;
      if (order.membership != cfg.membership)
        return make_troupe_error(troupe_errc::fenced,
                                 "replica " + std::to_string(cfg.index)
                                   + " of membership epoch " + std::to_string(cfg.membership)
                                   + " refuses an epoch order for epoch "
                                   + std::to_string(order.membership));
      st.promise = self->make_response_promise<replica_report>();
      st.params = std::move(order.params);
      st.device_parts.clear();
      st.first_round = st.params.round - order.start_round;
      st.order = epoch_permutation(st.setup->train->size(), cfg.seed,
                                   order.epoch);
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
    },
    [self](ready_atom) -> uint32_t { return self->state.setup->config.index; },
    [self](tick_atom) { check_watchdog(self); },
  };
}


// A replica whose job this node cannot run: it stays up to answer with the
// reason. Ending at once would lose it, as a monitor that reaches an actor
// already gone only reports exit_reason::unknown. It ends once it has told,
// or when its store is gone (nobody will ask then).
replica_actor::behavior_type failed_replica(replica_pointer self, caf::error reason,
                                            const std::vector<store_actor>& shards) {
  for (const auto& shard : shards)
    self->monitor(shard);
  self->set_down_handler([self, reason](caf::down_msg&) { self->quit(reason); });
  return {
    [self, reason](epoch_atom, epoch_order&) -> caf::result<replica_report> {
      self->quit(reason);
      return reason;
    },
    [self, reason](ready_atom) -> caf::result<uint32_t> {
      self->quit(reason);
      return reason;
    },
    [](tick_atom) {},
  };
}

// What CAF's remote spawn runs on a node: the same replica, built from the
// job description alone. A job the node cannot run is logged here and told
// to the spawner, which asks every remote replica whether it is ready.
replica_actor::behavior_type remote_replica(replica_pointer self, replica_config config,
                                            std::vector<store_actor> shards) {
  auto setup = make_replica_setup(config, shards, nullptr, {}, self->system().node());
  if (!setup) {
    auto reason = setup.error();
    std::fprintf(stderr, "troupe node: replica %u of %u on %s cannot start: %s\n",
                 config.index, config.replicas, config.device.c_str(),
                 describe(reason).c_str());
    return failed_replica(self, std::move(reason), shards);
  }
  std::fprintf(stderr, "troupe node: replica %u of %u on %s started\n", config.index,
               config.replicas, config.device.c_str());
  self->attach_functor([index = config.index](const caf::error& reason) {
    std::fprintf(stderr, "troupe node: replica %u stopped: %s\n", index,
                 reason ? describe(reason).c_str() : "done");
  });
  return replica(self, std::move(*setup));
}

} // namespace

caf::expected<replica_actor> spawn_replica(caf::actor_system& system,
                                           const replica_config& config,
                                           std::vector<store_actor> shards,
                                           std::shared_ptr<const data_source> train,
                                           const backend_wrapper& wrap) {
  auto setup = make_replica_setup(config, std::move(shards), std::move(train), wrap,
                                  system.node());
  if (!setup)
    return setup.error();
  if (replica_needs_own_thread(config))
    return system.spawn<caf::detached>(replica, std::move(*setup));
  return system.spawn(replica, std::move(*setup));
}

bool replica_needs_own_thread(const replica_config& config) {
  return config.pin_core || config.device != "cpu" || config.slowdown > 1.0f;
}

caf::actor_factory remote_replica_factory() {
  return caf::make_actor_factory(remote_replica);
}

} // namespace troupe
