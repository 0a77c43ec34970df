// The coordinator actor and the blocking fit() entry point around it.
#include "actors/coordinator.hpp"

#include <algorithm>
#include <chrono>

#include <caf/all.hpp>

#include "actors/placement.hpp"
#include "actors/variable_store.hpp"
#include "messages/errors.hpp"
#include "model/backend/cpu/eigen_backend.hpp"
#include "model/checkpoint.hpp"
#include "model/data/batch_plan.hpp"
#include "model/network.hpp"
#include "model/parameter_layout.hpp"

namespace troupe {

namespace {

using clock_type = std::chrono::steady_clock;

struct coordinator_state {
  static inline const char* name = "troupe.coordinator";

  fit_options options;
  std::shared_ptr<const dataset_pair> data;
  epoch_observer observer;
  std::vector<std::string> devices;
  std::vector<std::string> places; // per replica, for messages: "cpu", "node H:P (cpu)"
  replica_spawner spawn_replica;
  store_spawner spawn_store;
  std::string store_place; // for messages: "this process", "node H:P"
  std::unique_ptr<backend> eval_backend;
  std::unique_ptr<network> eval_net;
  store_actor store;
  std::vector<replica_actor> replicas;
  std::vector<bool> alive;
  std::vector<bool> reported;  // this epoch
  std::vector<replica_report> reports;
  uint32_t epoch = 0;
  uint64_t resume_round = 0; // rounds of the first epoch a resumed run skips
  store_options store_init;  // built and checked by fit()
  clock_type::time_point epoch_start;
  store_stats last_stats;
  double train_seconds = 0;
  uint64_t train_samples = 0;
  epoch_record last_record;
  caf::typed_response_promise<fit_summary> promise;
  bool done = false;
};

using coordinator_pointer = coordinator_actor::stateful_pointer<coordinator_state>;

std::chrono::milliseconds step_timeout(const coordinator_state& st) {
  return std::chrono::milliseconds(st.options.step_timeout_ms);
}

void shutdown(coordinator_pointer self) {
  auto& st = self->state;
  for (auto& replica : st.replicas)
    self->send_exit(replica, caf::exit_reason::user_shutdown);
  if (st.store)
    self->send_exit(st.store, caf::exit_reason::user_shutdown);
  self->quit();
}

void fail_run(coordinator_pointer self, caf::error err) {
  auto& st = self->state;
  if (st.done)
    return;
  st.done = true;
  st.promise.deliver(std::move(err));
  shutdown(self);
}

uint32_t live_count(const coordinator_state& st) {
  return static_cast<uint32_t>(std::count(st.alive.begin(), st.alive.end(), true));
}

void start_epoch(coordinator_pointer self);

void finish_epoch(coordinator_pointer self) {
  auto& st = self->state;
  const double seconds =
    std::chrono::duration<double>(clock_type::now() - st.epoch_start).count();
  self->request(st.store, step_timeout(st), stats_atom::value)
    .then(
      [self, seconds](store_stats& stats) {
        auto& st = self->state;
        epoch_record record;
        record.epoch = st.epoch + 1;
        double loss_sum = 0;
        uint64_t correct = 0;
        uint64_t reported_samples = 0; // of replicas that finished the epoch
        for (size_t i = 0; i < st.reports.size(); ++i) {
          if (!st.reported[i])
            continue;
          const auto& report = st.reports[i];
          reported_samples += report.samples;
          loss_sum += report.loss_sum;
          correct += report.correct;
          record.compute_seconds += report.compute_seconds;
          record.wait_seconds += report.wait_seconds;
        }
        // Samples that went into updates, counted by the store: with a lost
        // replica this still covers its pushes and the survivors' takeover.
        record.samples = stats.samples - st.last_stats.samples;
        record.train_loss = reported_samples > 0 ? loss_sum / reported_samples : 0;
        record.train_accuracy =
          reported_samples > 0 ? double(correct) / reported_samples : 0;
        record.seconds = seconds;
        record.samples_per_second = seconds > 0 ? record.samples / seconds : 0;
        record.pushes = stats.pushes - st.last_stats.pushes;
        record.apply_seconds = stats.apply_seconds - st.last_stats.apply_seconds;
        const auto staleness = stats.staleness_sum - st.last_stats.staleness_sum;
        record.staleness_mean = record.pushes > 0 ? double(staleness) / record.pushes : 0;
        record.staleness_max = stats.staleness_max;
        record.version = stats.version;
        record.live_replicas = live_count(st);
        st.last_stats = stats;
        st.train_seconds += seconds;
        st.train_samples += record.samples;
        self->request(st.store, step_timeout(st), params_atom::value)
          .then(
            [self, record](params_msg& params) mutable {
              auto& st = self->state;
              st.eval_net->use_parameters(params.values.data());
              auto test = st.eval_net->evaluate(st.data->test.images.data(),
                                                st.data->test.labels.data(),
                                                static_cast<size_t>(st.data->test.count));
              record.test_loss = test.mean_loss();
              record.test_accuracy = test.accuracy();
              st.last_record = record;
              if (st.observer)
                st.observer(record);
              ++st.epoch;
              if (st.options.checkpoint_path.empty()) {
                start_epoch(self);
                return;
              }
              // Every epoch ends with a checkpoint (async runs resume from these).
              self->request(st.store, step_timeout(st), save_atom::value)
                .then([self](uint64_t) { start_epoch(self); },
                      [self](caf::error& err) { fail_run(self, err); });
            },
            [self](caf::error& err) { fail_run(self, err); });
      },
      [self](caf::error& err) { fail_run(self, err); });
}

void finish_epoch_if_complete(coordinator_pointer self) {
  auto& st = self->state;
  for (size_t i = 0; i < st.replicas.size(); ++i)
    if (st.alive[i] && !st.reported[i])
      return;
  finish_epoch(self);
}

void lose_replica(coordinator_pointer self, size_t index, const std::string& reason) {
  auto& st = self->state;
  if (st.done || !st.alive[index])
    return;
  st.alive[index] = false;
  const std::string what = "replica " + std::to_string(index) + " on "
                           + st.places[index] + " died in epoch "
                           + std::to_string(st.epoch + 1) + ": " + reason;
  if (st.options.on_replica_loss != "continue") {
    fail_run(self, make_troupe_error(troupe_errc::replica_lost,
                                     what + " (--on-replica-loss=abort)"));
    return;
  }
  if (live_count(st) == 0) {
    fail_run(self, make_troupe_error(troupe_errc::replica_lost,
                                     what + "; no replica is left"));
    return;
  }
  std::fprintf(stderr, "warning: %s; continuing with %u replicas\n", what.c_str(),
               live_count(st));
  if (!st.reported[index])
    finish_epoch_if_complete(self);
}

void start_epoch(coordinator_pointer self) {
  auto& st = self->state;
  if (st.epoch >= st.options.epochs) {
    self->request(st.store, step_timeout(st), params_atom::value)
      .then(
        [self](params_msg& params) {
          auto& st = self->state;
          fit_summary summary;
          summary.mode = st.options.mode;
          summary.replicas = static_cast<uint32_t>(st.replicas.size());
          summary.live_replicas = live_count(st);
          summary.epochs = st.options.epochs;
          if (st.last_record.epoch == 0) { // a resumed run with nothing left to do
            st.eval_net->use_parameters(params.values.data());
            auto test = st.eval_net->evaluate(st.data->test.images.data(),
                                              st.data->test.labels.data(),
                                              static_cast<size_t>(st.data->test.count));
            st.last_record.test_loss = test.mean_loss();
            st.last_record.test_accuracy = test.accuracy();
          }
          summary.test_loss = st.last_record.test_loss;
          summary.test_accuracy = st.last_record.test_accuracy;
          summary.samples_per_second =
            st.train_seconds > 0 ? st.train_samples / st.train_seconds : 0;
          summary.version = params.version;
          summary.params_fnv1a64 =
            fnv1a64(params.values.data(), params.values.size() * sizeof(float));
          summary.params = params.values;
          st.done = true;
          st.promise.deliver(std::move(summary));
          shutdown(self);
        },
        [self](caf::error& err) { fail_run(self, err); });
    return;
  }
  self->request(st.store, step_timeout(st), params_atom::value)
    .then(
      [self](params_msg& params) {
        auto& st = self->state;
        const batch_plan plan(static_cast<size_t>(st.data->train.count),
                              st.options.batch_size, st.replicas.size());
        // A replica waits at most one step timeout per round; this is the backstop.
        const auto epoch_timeout = step_timeout(st) * (plan.rounds() + 2);
        std::fill(st.reported.begin(), st.reported.end(), false);
        st.epoch_start = clock_type::now();
        epoch_order order{st.epoch, params, st.resume_round};
        self->send(st.store, epoch_atom::value, uint64_t{st.epoch},
                   params.round - st.resume_round);
        st.resume_round = 0;
        for (size_t i = 0; i < st.replicas.size(); ++i) {
          if (!st.alive[i])
            continue;
          self->request(st.replicas[i], epoch_timeout, epoch_atom::value, order)
            .then(
              [self, i](replica_report& report) {
                auto& st = self->state;
                st.reports[i] = report;
                st.reported[i] = true;
                finish_epoch_if_complete(self);
              },
              [self, i](caf::error& err) {
                auto& st = self->state;
                if (err == caf::sec::request_receiver_down) {
                  lose_replica(self, i, describe(err));
                  return;
                }
                if (st.alive[i])
                  fail_run(self, err);
              });
        }
      },
      [self](caf::error& err) { fail_run(self, err); });
}

coordinator_actor::behavior_type coordinator(coordinator_pointer self,
                                             std::shared_ptr<coordinator_state> init) {
  auto& st = self->state;
  st.options = init->options;
  st.data = init->data;
  st.observer = init->observer;
  st.devices = init->devices;
  st.places = init->places;
  st.store_init = std::move(init->store_init);
  st.epoch = init->epoch;
  st.resume_round = init->resume_round;
  st.spawn_replica = init->spawn_replica;
  st.spawn_store = init->spawn_store;
  st.store_place = init->store_place;
  st.eval_backend = make_eigen_backend();
  auto spec = *parse_model_spec(st.options.model);
  st.eval_net = std::make_unique<network>(spec, *st.eval_backend, 1000);
  self->set_down_handler([self](caf::down_msg& msg) {
    auto& st = self->state;
    auto store_died = [&](const std::string& why) {
      fail_run(self, make_troupe_error(troupe_errc::replica_lost,
                                       "the variable store (" + st.store_place
                                         + ") died: " + why));
    };
    // A replica that stopped because its store died may be noticed here
    // before the store itself: report the cause, the store.
    if (msg.reason == troupe_errc::store_lost) {
      store_died("its replicas lost it (" + describe(msg.reason) + ")");
      return;
    }
    for (size_t i = 0; i < st.replicas.size(); ++i)
      if (st.replicas[i].address() == msg.source)
        lose_replica(self, i, describe(msg.reason));
    if (st.store && st.store.address() == msg.source)
      store_died(describe(msg.reason));
  });
  return {
    [self](fit_atom) -> caf::result<fit_summary> {
      auto& st = self->state;
      st.promise = self->make_response_promise<fit_summary>();
      auto store = st.spawn_store(std::move(st.store_init));
      if (!store) {
        fail_run(self, make_troupe_error(troupe_errc::bad_config,
                                         "cannot start the variable store on "
                                           + st.store_place + ": " + describe(store.error())));
        return st.promise;
      }
      st.store = *store;
      self->monitor(st.store);
      for (uint32_t i = 0; i < st.options.replicas; ++i) {
        replica_config cfg;
        cfg.index = i;
        cfg.replicas = st.options.replicas;
        cfg.model = st.options.model;
        cfg.device = st.devices[i];
        cfg.seed = st.options.seed;
        cfg.global_batch = st.options.batch_size;
        cfg.step_timeout_ms = st.options.step_timeout_ms;
        cfg.data_dir = st.options.data_dir;
        cfg.pin_core = st.options.pin_cores;
        if (st.options.fail_at_push > 0 && i == st.options.fail_replica)
          cfg.fail_at_push = st.options.fail_at_push;
        auto replica = st.spawn_replica(cfg, st.store);
        if (!replica) {
          fail_run(self, make_troupe_error(troupe_errc::bad_config,
                                           "cannot start replica " + std::to_string(i) + " on "
                                             + st.places[i] + ": "
                                             + describe(replica.error())));
          return st.promise;
        }
        self->monitor(*replica);
        st.replicas.push_back(*replica);
        // Watches reach the store before any push: the first epoch order
        // follows the store's answer to a later request from this actor.
        self->request(st.store, step_timeout(st), watch_atom::value, i, *replica)
          .then([](uint32_t) {}, [self](caf::error& err) { fail_run(self, err); });
      }
      st.alive.assign(st.replicas.size(), true);
      st.reported.assign(st.replicas.size(), false);
      st.reports.assign(st.replicas.size(), replica_report{});
      start_epoch(self);
      return st.promise;
    },
  };
}

} // namespace

caf::expected<fit_summary> fit(caf::actor_system& system, const fit_options& options,
                               std::shared_ptr<const dataset_pair> data,
                               epoch_observer observer) {
  auto checked = check_fit_options(options, data.get());
  if (!checked)
    return checked.error();
  const fit_options& opts = *checked;
  const auto spec = parse_model_spec(opts.model); // checked above
  auto devices = assign_devices(opts.devices, opts.replicas);
  if (!devices)
    return devices.error();
  auto init = std::make_shared<coordinator_state>();
  init->options = opts;
  init->data = std::move(data);
  init->observer = std::move(observer);
  init->devices = std::move(*devices);
  auto& store_init = init->store_init;
  store_init.mode = opts.mode;
  store_init.optimizer = opts.optimizer;
  store_init.model = opts.model;
  store_init.config_fingerprint = run_fingerprint(opts);
  store_init.checkpoint_path = opts.checkpoint_path;
  store_init.checkpoint_every = opts.checkpoint_every;
  const parameter_layout layout(*spec);
  if (opts.resume_path.empty()) {
    store_init.initial_parameters = glorot_uniform_parameters(layout, opts.seed);
  } else {
    auto saved = read_checkpoint(opts.resume_path);
    if (!saved)
      return to_caf_error(saved.error());
    auto fits = check_compatible(*saved, opts.model, store_init.config_fingerprint,
                                 layout.size(), opts.resume_path);
    if (!fits)
      return to_caf_error(fits.error());
    store_init.initial_parameters = std::move(saved->params);
    store_init.initial_version = saved->version;
    store_init.initial_optimizer_state = std::move(saved->optimizer_state);
    store_init.initial_optimizer_steps = saved->optimizer_steps;
    store_init.initial_round = saved->round;
    const batch_plan epoch_plan(static_cast<size_t>(init->data->train.count),
                                opts.batch_size, opts.replicas);
    // A checkpoint taken at an epoch's end (every async one) resumes at the next.
    const bool epoch_done = opts.mode == "async" || saved->epoch_round >= epoch_plan.rounds();
    init->epoch = static_cast<uint32_t>(saved->epoch + (epoch_done ? 1 : 0));
    init->resume_round = epoch_done ? 0 : saved->epoch_round;
  }
  auto placed = make_placement(system, opts, init->devices,
                                std::shared_ptr<const dataset>(init->data, &init->data->train));
  if (!placed)
    return placed.error();
  init->spawn_store = std::move(placed->spawn_store);
  init->store_place = std::move(placed->store_place);
  init->spawn_replica = std::move(placed->spawn_replica);
  init->places = std::move(placed->replica_places);
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
