// The coordinator's phases: start an epoch, gather its reports, collect the
// store's stats, evaluate, checkpoint, and finish or fail the run.
#include "actors/run/epoch_phases.hpp"

#include <algorithm>

#include <memory>

#include <caf/all.hpp>

#include "actors/replica/store_group.hpp"
#include "actors/run/graceful_stop.hpp"
#include "actors/run/epoch_records.hpp"
#include "actors/run/learning_rate.hpp"
#include "actors/run/respawn.hpp"
#include "actors/run/shard_questions.hpp"
#include "actors/run/store_heal.hpp"
#include "actors/store/checkpoint_writer.hpp"
#include "actors/runtime/trace_clock.hpp"
#include "messages/errors.hpp"
#include "model/data/batch_plan.hpp"
#include "model/model_spec.hpp"

namespace troupe::detail {

namespace {

using clock_type = std::chrono::steady_clock;

// Fails the run with a request's error: the one error path of every phase,
// unless a store heal replaced the actor asked since.
auto fail_on_error(coordinator_pointer self) {
  return self->state.members.guard(
    [self](caf::error& err) { fail_run(self, std::move(err)); });
}

// Every push reaches every shard, so once the replicas are done with an
// epoch each shard has taken as many steps: a difference means a push was
// applied twice or lost. Under --on-replica-loss=continue a replica that
// died mid-push may have reached some shards only; there it is no error.
caf::error check_versions_agree(const coordinator_state& st,
                                const std::vector<params_msg>& parts) {
  if (st.setup.plan.config.on_replica_loss == replica_loss_action::continue_run)
    return caf::none;
  for (size_t k = 1; k < parts.size(); ++k)
    if (parts[k].version != parts.front().version)
      return make_troupe_error(troupe_errc::store_lost,
                               "the store's shards disagree after epoch "
                                 + std::to_string(st.epoch) + ": shard 0 took "
                                 + std::to_string(parts.front().version) + " steps, shard "
                                 + std::to_string(k) + " " + std::to_string(parts[k].version));
  return caf::none;
}

// Asks every shard for its parameters and calls `then` with all of them
// joined: a copy of the coordinator's own, as it keeps them while shards
// step. Called between epochs only, when the shards must agree.
template <class Then>
void fetch_params(coordinator_pointer self, Then then) {
  ask_every_shard<params_msg>(
    self,
    [self](size_t k) {
      return self->request(self->state.shards[k].actor, step_timeout(self->state),
                           params_atom::value);
    },
    [self, then](std::vector<params_msg>& parts) mutable {
      if (auto err = check_versions_agree(self->state, parts)) {
        fail_run(self, std::move(err));
        return;
      }
      std::shared_ptr<std::vector<float>> copy;
      auto joined = join_params(parts, self->state.setup.plan.parameter_count, copy, true);
      then(joined);
    });
}

// Phase: every epoch done; the final parameters, the summary, exits.
void finish_run(coordinator_pointer self) {
  fetch_params(self, [self](params_msg& params) {
    auto& st = self->state;
    st.done = true;
    st.members.end();
    st.promise.deliver(summarize(st, params));
    shutdown_run(self);
  });
}

// Phase: with --checkpoint, every epoch ends with one (async runs resume
// from these); then the next epoch starts.
void checkpoint_if_due(coordinator_pointer self) {
  auto& st = self->state;
  if (st.setup.plan.config.checkpoint_path.empty()) {
    start_epoch(self);
    return;
  }
  auto saved = st.members.guard([self](uint64_t) {
    trace_instant(self->state, "checkpoint");
    start_epoch(self);
  });
  gather_store_parts(self, [self, saved](std::vector<checkpoint_part>& parts) {
    auto& st = self->state;
    attach_residuals(parts, epoch_residuals(st), st.setup.plan.parameter_count);
    self->request(st.writer, step_timeout(st), save_atom::value, std::move(parts))
      .then(saved, fail_on_error(self));
  });
}

// Phase: the caller's callbacks, on the thread that called fit(), hear the
// epoch; they go on, end the run after it, or fail it (a callback threw).
// The coordinator monitors the caller, so this wait has no timeout.
void steer_epoch(coordinator_pointer self, const epoch_record& record,
                 const params_msg& params) {
  auto& st = self->state;
  if (!st.caller) {
    checkpoint_if_due(self);
    return;
  }
  st.awaiting_verdict = true;
  self->request(st.caller, caf::infinite, epoch_atom::value, record, params.values.to_vector())
    .then(
      [self](bool stop, float learning_rate_factor) {
        auto& st = self->state;
        st.awaiting_verdict = false;
        st.stop_requested = st.stop_requested || stop;
        if (st.done)
          return;
        auto go_on = [self, learning_rate_factor] {
          scale_learning_rate(self, learning_rate_factor, [self] { checkpoint_if_due(self); });
        };
        if (st.healing) // its shards are not back yet: resume_after_heal goes on
          st.after_heal = std::move(go_on);
        else
          go_on();
      },
      [self](caf::error& err) {
        self->state.awaiting_verdict = false;
        fail_run(self, std::move(err));
      });
}

// Phase: scores the epoch's parameters on the test set and tells the observer.
void evaluate_epoch(coordinator_pointer self, epoch_record record) {
  fetch_params(self, [self, record](params_msg& params) mutable {
    auto& st = self->state;
    if (auto err = evaluate_test_set(st, params, record)) {
      fail_run(self, std::move(err));
      return;
    }
    st.last_record = record;
    if (st.setup.observer.on_epoch)
      st.setup.observer.on_epoch(record);
    ++st.epoch;
    st.epoch_recorded = true;
    steer_epoch(self, record, params);
  });
}

// Warns about the periodic checkpoints the writer could not write since it
// was last asked (training goes on; only the end-of-epoch save is fatal).
void warn_failed_checkpoints(coordinator_state& st, const checkpoint_stats& stats) {
  const auto failed = stats.failed - st.last_checkpoint_stats.failed;
  if (failed == 1)
    warn(st, "checkpoint not written: " + stats.last_error);
  else if (failed > 1)
    warn(st, std::to_string(failed) + " checkpoints not written in epoch "
               + std::to_string(st.epoch + 1) + ", the last: " + stats.last_error);
  st.last_checkpoint_stats = stats;
}

// Phase: with --checkpoint-every, the writer's stats: periodic checkpoints
// that failed become warnings; then the epoch is scored.
void check_checkpoints(coordinator_pointer self, epoch_record record) {
  auto& st = self->state;
  if (!st.writer) {
    evaluate_epoch(self, record);
    return;
  }
  self->request(st.writer, step_timeout(st), stats_atom::value)
    .then(st.members.guard([self, record](checkpoint_stats& stats) {
            warn_failed_checkpoints(self->state, stats);
            evaluate_epoch(self, record);
          }),
          fail_on_error(self));
}

// With --trace, writes the epoch's spans: the replicas' from their reports,
// the shards' from their stats (and, for shard 0, the progress polls).
void write_epoch_trace(coordinator_state& st, const std::vector<store_stats>& shards) {
  if (!st.setup.trace)
    return;
  for (size_t i = 0; i < st.replicas.size(); ++i) {
    const auto& replica = st.replicas[i];
    if (replica.reported)
      st.setup.trace->add_replica_spans(static_cast<uint32_t>(i), replica.report.trace,
                                        st.nodes.clock_offset(replica.where.node));
  }
  for (size_t k = 0; k < shards.size(); ++k) {
    auto& spans = st.shards[k].spans;
    spans.insert(spans.end(), shards[k].trace.begin(), shards[k].trace.end());
    st.setup.trace->add_shard_spans(static_cast<uint32_t>(k), spans,
                                    st.nodes.clock_offset(st.shards[k].where.node));
    spans.clear();
  }
  trace_instant(st, "epoch " + std::to_string(st.epoch + 1) + " end");
}

// Phase: every live replica reported; the shards' stats make the epoch's record.
void collect_epoch_stats(coordinator_pointer self) {
  auto& st = self->state;
  const double seconds =
    std::chrono::duration<double>(clock_type::now() - st.epoch_start).count();
  ask_every_shard<store_stats>(
    self,
    [self](size_t k) {
      return self->request(self->state.shards[k].actor, step_timeout(self->state),
                           stats_atom::value);
    },
    [self, seconds](std::vector<store_stats>& shards) {
      auto& st = self->state;
      write_epoch_trace(st, shards); // once the epoch's time is taken
      const auto stats = combine_shard_stats(shards);
      auto record = sum_epoch(st, stats, seconds);
      st.last_stats = stats;
      st.members.fenced_answers_recorded = st.members.fenced_answers;
      st.train_seconds += seconds;
      st.train_samples += record.samples;
      check_checkpoints(self, record);
    });
}

// Tells the store where the epoch starts and sends each live replica its order.
void send_epoch_orders(coordinator_pointer self, const params_msg& params) {
  auto& st = self->state;
  for (auto& replica : st.replicas)
    replica.reported = false;
  st.epoch_start = clock_type::now();
  const uint64_t skipped = st.epoch == st.setup.plan.first_epoch ? st.setup.plan.resume_round : 0;
  epoch_order order{st.epoch, params, skipped};
  for (const auto& shard : st.shards)
    self->send(shard.actor, epoch_atom::value, uint64_t{st.epoch}, params.round - skipped);
  if (st.setup.observer.on_progress)
    self->delayed_send(caf::actor_cast<coordinator_actor>(self),
                       st.setup.observer.progress_interval, tick_atom::value, st.epoch + 1);
  st.epoch_first_round = params.round - skipped;
  st.samples_before_heal = 0;
  st.pushes_before_heal = 0;
  st.training = true;
  st.epoch_recorded = false;
  for (size_t i = 0; i < st.replicas.size(); ++i)
    if (st.replicas[i].alive && !st.replicas[i].respawning) {
      order.residual = carried_residual(st, i);
      order_epoch(self, i, order);
    }
  st.carried_residuals.clear();
}

} // namespace

std::vector<float> epoch_residuals(const coordinator_state& st) {
  std::vector<float> all;
  for (const auto& replica : st.replicas) {
    const auto& residual = replica.report.residual;
    if (!replica.reported || residual.size() != st.setup.plan.parameter_count)
      return {};
    all.insert(all.end(), residual.data(), residual.data() + residual.size());
  }
  return all;
}

shared_floats carried_residual(const coordinator_state& st, size_t replica) {
  const auto& all = st.carried_residuals;
  const size_t count = st.setup.plan.parameter_count;
  if (all.size() < (replica + 1) * count)
    return {};
  const auto first = all.begin() + static_cast<std::ptrdiff_t>(replica * count);
  return shared_floats{std::vector<float>(first, first + static_cast<std::ptrdiff_t>(count))};
}

void collect_if_epoch_complete(coordinator_pointer self) {
  auto& st = self->state;
  for (const auto& replica : st.replicas)
    if (replica.alive && !replica.reported)
      return;
  st.training = false;
  snapshot_store(self, epoch_residuals(st), [self] { collect_epoch_stats(self); });
}

// Marks a moment of the run on the trace's coordinator track, with --trace.
void trace_instant(coordinator_state& st, const std::string& name) {
  if (st.setup.trace)
    st.setup.trace->add_instant(name, steady_nanoseconds());
}

// Passes a warning to the observer, if it listens.
void warn(const coordinator_state& st, const std::string& text) {
  if (st.setup.observer.on_warning)
    st.setup.observer.on_warning(text);
}

std::chrono::milliseconds step_timeout(const coordinator_state& st) {
  return std::chrono::milliseconds(st.setup.plan.config.step_timeout_ms);
}

void resume_after_heal(coordinator_pointer self) {
  auto& st = self->state;
  if (st.awaiting_verdict)
    return; // the caller's verdict goes on
  if (st.after_heal) { // it came during the heal
    auto go_on = std::move(st.after_heal);
    st.after_heal = nullptr;
    go_on();
    return;
  }
  if (st.epoch_recorded)
    checkpoint_if_due(self);
  else
    collect_epoch_stats(self);
}

void gather_store_parts(coordinator_pointer self,
                        std::function<void(std::vector<checkpoint_part>&)> then) {
  ask_every_shard<checkpoint_part>(
    self,
    [self](size_t k) {
      return self->request(self->state.shards[k].actor, step_timeout(self->state),
                           save_atom::value);
    },
    std::move(then));
}

void start_epoch(coordinator_pointer self) {
  auto& st = self->state;
  if (st.stop_graceful) {
    end_stopped_between_epochs(self);
    return;
  }
  if (st.epoch >= st.setup.plan.config.epochs || st.stop_requested) {
    finish_run(self);
    return;
  }
  fetch_params(self, [self](params_msg& params) { send_epoch_orders(self, params); });
}

} // namespace troupe::detail
