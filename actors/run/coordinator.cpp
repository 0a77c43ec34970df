// The coordinator actor (spawning, down messages) and the blocking fit()
// entry point around it; the epoch loop's phases are in epoch_phases.cpp.
#include "actors/run/coordinator.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include <caf/all.hpp>

#include "actors/cluster/frame_guard.hpp"
#include "actors/cluster/host_lanes.hpp"
#include "actors/run/epoch_phases.hpp"
#include "actors/run/graceful_stop.hpp"
#include "actors/runtime/trace_clock.hpp"
#include "actors/store/checkpoint_writer.hpp"
#include "messages/errors.hpp"
#include "model/data/batch_plan.hpp"
#include "model/data/source_registry.hpp"
#include "model/data/row_range.hpp"
#include "actors/run/join.hpp"
#include "actors/run/respawn.hpp"
#include "actors/run/retired_actors.hpp"
#include "actors/run/shard_respawn.hpp"
#include "actors/run/store_heal.hpp"
#include "model/model_description.hpp"

namespace troupe::detail {

namespace {

// Ends the run because the store died: nothing can go on without it, or
// without any of its shards.
void store_died(coordinator_pointer self, const std::string& where, const std::string& why) {
  fail_run(self, make_troupe_error(troupe_errc::store_lost,
                                   "the variable store (" + where + ") died: " + why));
}

// Sorts a down message: the store, or one of the replicas.
void on_down(coordinator_pointer self, const caf::down_msg& msg) {
  auto& st = self->state;
  if (retired_down(self, msg))
    return; // an actor a store heal stopped
  // A replica that stopped because its store died may be noticed here
  // before the store itself: report the cause, the store.
  if (msg.reason == troupe_errc::store_lost) {
    if (heals_store(st.setup.plan.config))
      return; // the shard's own down message follows, and heals the store
    fail_store_lost_by_replica(self, describe(msg.reason));
    return;
  }
  for (size_t i = 0; i < st.replicas.size(); ++i)
    if (st.replicas[i].actor.address() == msg.source)
      lose_replica(self, i, describe(msg.reason),
                   msg.reason == caf::exit_reason::remote_link_unreachable);
  for (size_t k = 0; k < st.shards.size(); ++k)
    if (st.shards[k].actor.address() == msg.source) {
      lose_shard(self, k, describe(msg.reason),
                 msg.reason == caf::exit_reason::remote_link_unreachable);
      return;
    }
  if (st.writer && st.writer.address() == msg.source)
    fail_run(self, make_troupe_error(troupe_errc::store_lost,
                                     "the checkpoint writer died: " + describe(msg.reason)));
  if (st.caller && st.caller.address() == msg.source)
    fail_run(self, make_troupe_error(troupe_errc::callback_failed,
                                     "the caller of fit is gone: " + describe(msg.reason)));
}

// Spawns the store's shards where the placement says, each with its slice of
// the initial parameters and optimizer state; false (the run failed) when
// one cannot be started.
bool spawn_store(coordinator_pointer self) {
  auto& st = self->state;
  const run_plan& plan = st.setup.plan;
  const auto& where = st.setup.where;
  if (!plan.config.checkpoint_path.empty() || heals_store(plan.config))
    st.writer = spawn_checkpoint_writer(self->system(), checkpoint_target_for(plan));
  // Sync shards of this process step two host buffers in turn (see
  // shared_parameter_buffers), so as not to write the lines replicas on
  // other cores just read; shards on a device step buffers of their own
  // there. One replica runs where its shard does and steps in place there.
  shared_parameter_buffers shared;
  const bool store_here =
    std::all_of(st.shards.begin(), st.shards.end(),
                [](const shard_slot& shard) { return shard.where.node == placement::here; });
  if (store_here && plan.config.store_device == "cpu" && plan.config.replicas > 1
      && plan.traits.replicas_wait_for_rounds)
    shared = shared_parameter_buffers::holding(plan.start.parameters.to_vector());
  for (uint32_t k = 0; k < st.shards.size(); ++k) {
    auto& shard = st.shards[k];
    auto spawned = where.spawn_store(st.nodes.store_rank(shard.where.node),
                                     store_config_for(plan, k, st.members.epoch), st.writer,
                                     caf::actor_cast<caf::actor>(self), shared);
    if (!spawned) {
      fail_run(self, make_troupe_error(troupe_errc::bad_config,
                                       "cannot start store shard " + std::to_string(k)
                                         + " on " + shard.where.text + ": "
                                         + describe(spawned.error())));
      return false;
    }
    self->monitor(*spawned);
    shard.actor = *spawned;
    shard.alive = true;
  }
  if (st.writer)
    self->monitor(st.writer);
  introduce_shards(self);
  return true;
}

// Phase: spawns the store and the replicas where the placement says; false
// (the run failed) when one cannot be started.
bool spawn_actors(coordinator_pointer self) {
  auto& st = self->state;
  const auto& where = st.setup.where;
  if (!spawn_store(self))
    return false;
  st.learning_rate_factor = st.setup.plan.start.learning_rate_factor;
  st.setup.plan.start = store_start{}; // the shards have their slices
  const auto shards = shard_actors(st);
  for (uint32_t i = 0; i < st.replicas.size(); ++i) {
    auto& slot = st.replicas[i];
    auto job = replica_config_for(st.setup.plan, i, st.members.epoch);
    auto replica = where.spawn_replica(st.nodes.replica_rank(slot.where.node), job, shards);
    if (!replica) {
      fail_run(self, make_troupe_error(troupe_errc::bad_config,
                                       "cannot start replica " + std::to_string(i) + " on "
                                         + slot.where.text + ": "
                                         + describe(replica.error())));
      return false;
    }
    self->monitor(*replica);
    slot.actor = *replica;
    slot.membership = st.members.epoch;
    // Watches reach every shard before any push: the first epoch order
    // follows each shard's answer to a later request from this actor.
    for (const auto& shard : shards)
      self->request(shard, step_timeout(st), watch_atom::value, i, *replica, st.members.epoch)
        .then([](uint64_t) {}, [self](caf::error& err) { fail_run(self, err); });
  }
  return true;
}

coordinator_actor::behavior_type coordinator(coordinator_pointer self,
                                             std::shared_ptr<coordinator_setup> setup) {
  auto& st = self->state;
  st.setup = std::move(*setup);
  st.nodes = std::move(st.setup.layout.nodes);
  st.replicas = std::move(st.setup.layout.replicas);
  st.shards = std::move(st.setup.layout.shards);
  st.epoch = st.setup.plan.first_epoch;
  st.carried_residuals = st.setup.plan.resume_residuals;
  st.evaluator = std::move(*model_description::resolve(st.setup.plan.config.model)
                             ->instantiate()); // checked by check_run_config
  st.metrics = *parse_metrics(st.setup.plan.config.extra_metrics); // checked as well
  self->set_down_handler([self](caf::down_msg& msg) { on_down(self, msg); });
  return {
    [self](fit_atom) -> caf::result<fit_summary> {
      auto& st = self->state;
      // Before the promise, which takes the sender out of the message.
      if (st.setup.steered && self->current_sender()) {
        st.caller = caf::actor_cast<caf::actor>(self->current_sender());
        self->monitor(st.caller);
      }
      st.promise = self->make_response_promise<fit_summary>();
      if (spawn_actors(self))
        snapshot_store(self, st.carried_residuals, [self] { start_epoch(self); });
      return st.promise;
    },
    [self](tick_atom, uint32_t epoch) { report_progress(self, epoch); },
    [self](stop_atom) { stop_gracefully(self); },
    [self](join_atom, std::string& host, uint16_t port) -> caf::result<std::string> {
      return accept_join(self, host, port);
    },
    [self](deadline_atom, uint64_t id) {
      if (!retired_deadline(self, id) && !parked_heal_deadline(self, id))
        respawn_deadline(self, id);
    },
  };
}

// Runs `steering` on an epoch's record here, on fit()'s thread: a callback's
// exception becomes the run's error.
caf::result<bool, float> steer(const epoch_steering& steering, const epoch_record& record,
                               const std::vector<float>& params) {
  try {
    const epoch_verdict verdict = steering(record, params);
    if (!(std::isfinite(verdict.learning_rate_factor) && verdict.learning_rate_factor > 0.0f))
      return make_troupe_error(troupe_errc::callback_failed,
                               "a callback after epoch " + std::to_string(record.epoch)
                                 + " scaled the learning rate by "
                                 + std::to_string(verdict.learning_rate_factor)
                                 + ", not a positive number");
    return {verdict.stop, verdict.learning_rate_factor};
  } catch (const std::exception& e) {
    return make_troupe_error(troupe_errc::callback_failed,
                             "a callback after epoch " + std::to_string(record.epoch)
                               + " threw: " + e.what());
  } catch (...) {
    return make_troupe_error(troupe_errc::callback_failed,
                             "a callback after epoch " + std::to_string(record.epoch)
                               + " threw an exception that is not a std::exception");
  }
}

// Starts the run and waits for its end, here on fit()'s thread, hearing
// each epoch for `steering` and asking `stop_asked` meanwhile; each wait is
// bounded by `timeout`.
caf::expected<fit_summary> await_run(caf::actor_system& system,
                                     const coordinator_actor& coordinator_handle,
                                     const epoch_steering& steering,
                                     const std::function<bool()>& stop_asked,
                                     std::chrono::milliseconds timeout) {
  using clock = std::chrono::steady_clock;
  caf::expected<fit_summary> result = caf::sec::request_timeout;
  caf::scoped_actor self{system};
  self->monitor(coordinator_handle);
  // Sent, not requested: the answer comes as a message like the epochs'.
  self->send(coordinator_handle, fit_atom::value);
  bool done = false;
  bool stop_sent = false;
  auto last_heard = clock::now();
  const auto poll = stop_asked ? std::min<std::chrono::milliseconds>(
                                   timeout, std::chrono::milliseconds(100))
                               : timeout;
  auto pass_on_stop = [&] {
    if (!stop_sent && stop_asked && stop_asked()) {
      self->send(coordinator_handle, stop_atom::value);
      stop_sent = true;
    }
  };
  self->receive_while([&] { return !done; })(
    [&](fit_summary& summary) {
      result = std::move(summary);
      done = true;
    },
    [&](caf::error& err) {
      result = std::move(err);
      done = true;
    },
    [&](epoch_atom, const epoch_record& record, const std::vector<float>& params) {
      last_heard = clock::now();
      auto verdict = steer(steering, record, params);
      pass_on_stop(); // a callback may have asked for it: it goes ahead of the verdict
      return verdict;
    },
    [&](caf::down_msg& down) {
      result = make_troupe_error(troupe_errc::store_lost,
                                 "the coordinator stopped: " + describe(down.reason));
      done = true;
    },
    caf::after(poll) >> [&] {
      pass_on_stop();
      if (clock::now() - last_heard < timeout)
        return;
      result = make_troupe_error(troupe_errc::timeout, "the run heard nothing for "
                                                         + std::to_string(timeout.count())
                                                         + " ms");
      done = true;
    });
  return result;
}

// Builds what the coordinator starts from: the plan, where its actors go,
// the trace file.
caf::expected<std::shared_ptr<coordinator_setup>>
make_coordinator_setup(caf::actor_system& system, const checked_run_config& config,
                       source_pair data, fit_observer observer) {
  data = split_for_validation(data, config.validation_split);
  auto plan = plan_run(config, data.train->size());
  if (!plan)
    return plan.error();
  auto setup = std::make_shared<coordinator_setup>();
  setup->plan = std::move(*plan);
  setup->data = std::move(data);
  setup->steered = static_cast<bool>(observer.on_epoch_end);
  setup->observer = std::move(observer);
  setup->run_start = std::chrono::steady_clock::now();
  const run_config& c = setup->plan.config;
  if (!c.trace_path.empty()) {
    auto trace = trace_file::open(c.trace_path, c.replicas, c.store_shards,
                                  steady_nanoseconds(setup->run_start));
    if (!trace)
      return trace.error();
    setup->trace = std::move(*trace);
  }
  auto placed = make_placement(system, setup->plan, setup->data.train, setup->layout);
  if (!placed)
    return placed.error();
  setup->where = std::move(*placed);
  return setup;
}

} // namespace

void fail_store_lost_by_replica(coordinator_pointer self, const std::string& reason) {
  auto& st = self->state;
  std::string places;
  for (size_t k = 0; k < st.shards.size(); ++k)
    places += (k == 0 ? "shard 0 on " : ", shard " + std::to_string(k) + " on ")
              + st.shards[k].where.text;
  store_died(self, places, "its replicas lost it (" + reason + ")");
}

void introduce_shards(coordinator_pointer self) {
  auto& st = self->state;
  const auto& config = st.setup.plan.config;
  if (st.shards.size() < 2 || config.optimizer.global_clipnorm <= 0.0f
      || !st.setup.plan.traits.steps_per_round)
    return;
  std::vector<caf::actor> shards;
  for (const auto& shard : st.shards)
    shards.push_back(caf::actor_cast<caf::actor>(shard.actor));
  for (const auto& shard : st.shards)
    self->send(shard.actor, peers_atom::value, shards);
}

std::vector<store_actor> shard_actors(const coordinator_state& st) {
  std::vector<store_actor> actors;
  for (const auto& shard : st.shards)
    actors.push_back(shard.actor);
  return actors;
}

caf::expected<fit_summary> run_training(caf::actor_system& system, const run_config& config,
                                        source_pair data, fit_observer observer) {
  auto checked = check_run_config(config, &data);
  if (!checked)
    return checked.error();
  return run_training(system, *checked, std::move(data), std::move(observer));
}

namespace {

// This process's lanes to node programs of its host for a plaintext run on
// nodes (host_lanes.hpp): its shards take the pushes of node replicas, and
// its replicas push to node shards, through shared memory. Held by the
// caller's thread for the run, never by an actor, whose end may come on a
// lane's own reader thread.
std::unique_ptr<host_lanes> open_coordinator_lanes(caf::actor_system& system,
                                                   const run_config& c) {
  if (c.tls || (c.nodes.empty() && c.store_nodes.empty()) || host_lanes::of(system) != nullptr)
    return nullptr;
  return std::make_unique<host_lanes>(system, host_lanes::capacity_for(default_max_frame_size));
}

} // namespace

caf::expected<fit_summary> run_training(caf::actor_system& system,
                                        const checked_run_config& config, source_pair data,
                                        fit_observer observer) {
  const auto lanes = open_coordinator_lanes(system, config);
  // The caller's callbacks stay here: they run on this thread.
  const epoch_steering steering = observer.on_epoch_end;
  const std::function<bool()> stop_asked = observer.stop_asked;
  auto setup = make_coordinator_setup(system, config, std::move(data), std::move(observer));
  if (!setup)
    return setup.error();
  const run_config c = (*setup)->plan.config; // a copy: the coordinator takes the setup
  const batch_plan plan((*setup)->data.train->size(), c.batch_size, c.replicas);
  // Bound on the whole run: every round of every epoch at its step timeout.
  const auto run_timeout = std::chrono::milliseconds(c.step_timeout_ms)
                           * ((plan.rounds() + 4) * (c.epochs + 1));
  auto coordinator_handle = system.spawn(coordinator, std::move(*setup));
  std::optional<join_door_actor> door;
  if (c.accept_joins) {
    auto opened = open_join_door(system, coordinator_handle, c);
    if (!opened) {
      caf::anon_send_exit(coordinator_handle, caf::exit_reason::user_shutdown);
      return opened.error();
    }
    door = *opened;
  }
  auto result = await_run(system, coordinator_handle, steering, stop_asked, run_timeout);
  if (door)
    close_join_door(system, *door, c);
  caf::anon_send_exit(coordinator_handle, caf::exit_reason::user_shutdown);
  return result;
}

caf::expected<fit_summary> run_training(caf::actor_system& system, const run_config& config,
                                        std::shared_ptr<const dataset_pair> data,
                                        fit_observer observer) {
  if (!data)
    return run_training(system, config, source_pair{}, std::move(observer));
  return run_training(system, config, sources_of(std::move(data)), std::move(observer));
}

} // namespace troupe::detail
