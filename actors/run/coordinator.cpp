// The coordinator actor (spawning, down messages) and the blocking fit()
// entry point around it; the epoch loop's phases are in epoch_phases.cpp.
#include "actors/run/coordinator.hpp"

#include <chrono>

#include <caf/all.hpp>

#include "actors/store/checkpoint_writer.hpp"
#include "actors/run/epoch_phases.hpp"
#include "actors/policy/update_policy.hpp"
#include "messages/errors.hpp"
#include "model/backend/cpu/eigen_backend.hpp"
#include "model/checkpoint.hpp"
#include "model/data/batch_plan.hpp"
#include "model/network.hpp"
#include "model/parameter_layout.hpp"
#include "model/shard_layout.hpp"

namespace troupe {

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
  // A replica that stopped because its store died may be noticed here
  // before the store itself: report the cause, the store.
  if (msg.reason == troupe_errc::store_lost) {
    std::string places;
    for (size_t k = 0; k < st.setup.where.store_places.size(); ++k)
      places += (k == 0 ? "shard 0 on " : ", shard " + std::to_string(k) + " on ")
                + st.setup.where.store_places[k];
    store_died(self, places, "its replicas lost it (" + describe(msg.reason) + ")");
    return;
  }
  for (size_t i = 0; i < st.replicas.size(); ++i)
    if (st.replicas[i].address() == msg.source)
      lose_replica(self, i, describe(msg.reason));
  const auto& shards = st.store.shards;
  for (size_t k = 0; k < shards.size(); ++k)
    if (shards[k].address() == msg.source)
      store_died(self,
                 "shard " + std::to_string(k) + " of " + std::to_string(shards.size()) + " on "
                   + st.setup.where.store_places[k],
                 describe(msg.reason));
  if (st.writer && st.writer.address() == msg.source)
    fail_run(self, make_troupe_error(troupe_errc::store_lost,
                                     "the checkpoint writer died: " + describe(msg.reason)));
}

// Spawns the store's shards where the placement says, each with its slice of
// the initial parameters and optimizer state; false (the run failed) when
// one cannot be started.
bool spawn_store(coordinator_pointer self) {
  auto& st = self->state;
  const auto& options = st.setup.options;
  const auto& where = st.setup.where;
  const store_config& init = st.setup.store_init;
  const size_t count = init.initial_parameters.size();
  st.store.parameter_count = count;
  st.store.ranges = *split_into_shards(count, options.store_shards); // checked with the options
  if (!options.checkpoint_path.empty())
    st.writer = spawn_checkpoint_writer(
      self->system(), checkpoint_target{options.checkpoint_path, options.model,
                                        run_fingerprint(options), options.optimizer.name,
                                        count, options.store_shards});
  // Sync shards of this process step two host buffers in turn (see
  // update_policy), so as not to write the lines replicas on other cores
  // just read; shards on a device step buffers of their own there. One
  // replica runs where its shard does: a step in place there saves copying
  // the range (sync, 1 replica, 2 cores: step 44-48 -> 33-39 us).
  shared_parameter_buffers shared;
  auto policy = make_update_policy(options.mode, 0, policy_settings_for(options));
  if (where.store_here && options.store_device == "cpu" && options.replicas > 1 && policy
      && (*policy)->replicas_wait_for_rounds())
    shared = shared_parameter_buffers::holding(init.initial_parameters.to_vector());
  for (uint32_t k = 0; k < options.store_shards; ++k) {
    const shard_range range = st.store.ranges[k];
    store_config shard = init;
    shard.shard = k;
    shard.shards = options.store_shards;
    shard.device = options.store_device;
    shard.parameter_count = count;
    shard.pin_core = options.pin_cores;
    shard.initial_parameters = init.initial_parameters.slice(range.offset, range.count);
    if (init.initial_optimizer_state.size() > 0)
      shard.initial_optimizer_state = shared_floats{
        slice_optimizer_state(init.initial_optimizer_state.data(),
                              init.initial_optimizer_state.size(), count, range)};
    auto spawned = where.spawn_store(std::move(shard), st.writer,
                                     caf::actor_cast<caf::actor>(self), shared);
    if (!spawned) {
      fail_run(self, make_troupe_error(troupe_errc::bad_config,
                                       "cannot start store shard " + std::to_string(k)
                                         + " on " + where.store_places[k] + ": "
                                         + describe(spawned.error())));
      return false;
    }
    self->monitor(*spawned);
    st.store.shards.push_back(*spawned);
  }
  if (st.writer)
    self->monitor(st.writer);
  return true;
}

// Phase: spawns the store and the replicas where the placement says; false
// (the run failed) when one cannot be started.
bool spawn_actors(coordinator_pointer self) {
  auto& st = self->state;
  const auto& options = st.setup.options;
  const auto& where = st.setup.where;
  if (!spawn_store(self))
    return false;
  // The shards have their slices: let go of the whole buffers.
  st.setup.store_init.initial_parameters = shared_floats{};
  st.setup.store_init.initial_optimizer_state = shared_floats{};
  for (uint32_t i = 0; i < options.replicas; ++i) {
    auto replica = where.spawn_replica(replica_config_for(options, i, st.setup.devices[i]),
                                       st.store.shards);
    if (!replica) {
      fail_run(self, make_troupe_error(troupe_errc::bad_config,
                                       "cannot start replica " + std::to_string(i) + " on "
                                         + where.replica_places[i] + ": "
                                         + describe(replica.error())));
      return false;
    }
    self->monitor(*replica);
    st.replicas.push_back(*replica);
    // Watches reach every shard before any push: the first epoch order
    // follows each shard's answer to a later request from this actor.
    for (const auto& shard : st.store.shards)
      self->request(shard, step_timeout(st), watch_atom::value, i, *replica)
        .then([](uint32_t) {}, [self](caf::error& err) { fail_run(self, err); });
  }
  st.alive.assign(st.replicas.size(), true);
  st.reported.assign(st.replicas.size(), false);
  st.reports.assign(st.replicas.size(), replica_report{});
  st.totals.assign(st.replicas.size(), replica_report{});
  st.shard_spans.assign(st.store.shards.size(), {});
  return true;
}

coordinator_actor::behavior_type coordinator(coordinator_pointer self,
                                             std::shared_ptr<coordinator_setup> setup) {
  auto& st = self->state;
  st.setup = std::move(*setup);
  st.epoch = st.setup.epoch;
  st.eval_backend = make_eigen_backend();
  auto spec = *parse_model_spec(st.setup.options.model);
  st.eval_net = std::make_unique<network>(spec, *st.eval_backend, 1000);
  self->set_down_handler([self](caf::down_msg& msg) { on_down(self, msg); });
  return {
    [self](fit_atom) -> caf::result<fit_summary> {
      auto& st = self->state;
      st.promise = self->make_response_promise<fit_summary>();
      if (spawn_actors(self))
        start_epoch(self);
      return st.promise;
    },
    [self](tick_atom, uint32_t epoch) { report_progress(self, epoch); },
  };
}

} // namespace

caf::expected<fit_summary> fit(caf::actor_system& system, const fit_options& options,
                               std::shared_ptr<const dataset_pair> data,
                               fit_observer observer) {
  auto checked = check_fit_options(options, data.get());
  if (!checked)
    return checked.error();
  const fit_options& opts = *checked;
  const auto spec = parse_model_spec(opts.model); // checked above
  auto init = std::make_shared<coordinator_setup>();
  init->options = opts;
  init->data = std::move(data);
  init->observer = std::move(observer);
  init->devices = assign_devices(opts.device_plan, opts.replicas);
  auto& store_init = init->store_init;
  store_init.mode = opts.mode;
  store_init.optimizer = opts.optimizer;
  store_init.checkpoint_every = opts.checkpoint_every;
  store_init.staleness = opts.staleness;
  store_init.backup_replicas = opts.backup_replicas;
  store_init.staleness_lr = opts.staleness_lr == "inverse";
  store_init.trace = !opts.trace_path.empty();
  store_init.abort_on_replica_loss = opts.loss_action == replica_loss_action::abort;
  init->run_start = std::chrono::steady_clock::now();
  if (!opts.trace_path.empty()) {
    auto trace = trace_file::open(opts.trace_path, opts.replicas, opts.store_shards,
                                  steady_nanoseconds(init->run_start));
    if (!trace)
      return trace.error();
    init->trace = std::move(*trace);
  }
  const parameter_layout layout(*spec);
  if (opts.resume_path.empty()) {
    store_init.initial_parameters = shared_floats{glorot_uniform_parameters(layout, opts.seed)};
  } else {
    auto saved = read_checkpoint(opts.resume_path);
    if (!saved)
      return to_caf_error(saved.error());
    auto fits = check_compatible(*saved, opts.model, run_fingerprint(opts),
                                 layout.size(), opts.resume_path);
    if (!fits)
      return to_caf_error(fits.error());
    store_init.initial_parameters = shared_floats{std::move(saved->params)};
    store_init.initial_version = saved->version;
    store_init.initial_optimizer_state = shared_floats{std::move(saved->optimizer_state)};
    store_init.initial_optimizer_steps = saved->optimizer_steps;
    store_init.initial_round = saved->round;
    const batch_plan epoch_plan(static_cast<size_t>(init->data->train.count),
                                opts.batch_size, opts.replicas);
    // A checkpoint written once its epoch was complete resumes at the next; so
    // does a periodic one taken after the epoch's last round (or a format-1
    // file, which has no flag: its async epoch_round counts pushes, >= rounds).
    const bool epoch_done = saved->epoch_complete || saved->epoch_round >= epoch_plan.rounds();
    init->epoch = static_cast<uint32_t>(saved->epoch + (epoch_done ? 1 : 0));
    init->resume_round = epoch_done ? 0 : saved->epoch_round;
  }
  auto placed = make_placement(system, opts, init->devices,
                                std::shared_ptr<const dataset>(init->data, &init->data->train));
  if (!placed)
    return placed.error();
  init->where = std::move(*placed);
  const batch_plan plan(static_cast<size_t>(init->data->train.count), opts.batch_size,
                        opts.replicas);
  // Bound on the whole run: every round of every epoch at its step timeout.
  const auto run_timeout = std::chrono::milliseconds(opts.step_timeout_ms)
                           * ((plan.rounds() + 4) * (opts.epochs + 1));
  auto coordinator_handle = system.spawn(coordinator, init);
  caf::expected<fit_summary> result = caf::sec::request_timeout;
  caf::scoped_actor self{system};
  self->request(coordinator_handle, run_timeout, fit_atom::value)
    .receive([&](fit_summary& summary) { result = std::move(summary); },
             [&](caf::error& err) { result = std::move(err); });
  self->send_exit(coordinator_handle, caf::exit_reason::user_shutdown);
  return result;
}

} // namespace troupe
