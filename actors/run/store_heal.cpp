// Healing a store on nodes: roll back to the newest snapshot, respawn.
#include "actors/run/store_heal.hpp"

#include <algorithm>
#include <chrono>
#include <optional>

#include <caf/all.hpp>

#include "actors/replica/gather.hpp"
#include "actors/run/recovery.hpp"
#include "actors/run/respawn.hpp"
#include "actors/run/retired_actors.hpp"
#include "actors/run/shard_respawn.hpp"
#include "actors/store/checkpoint_writer.hpp"
#include "messages/errors.hpp"
#include "model/data/batch_plan.hpp"

namespace troupe::detail {

namespace {

using clock_type = std::chrono::steady_clock;

// How often the run may heal from one snapshot before it gives up: a round
// that kills every store node that recomputes it must not heal forever.
constexpr uint32_t heals_per_snapshot = 3;

std::string shard_text(const coordinator_state& st, size_t k) {
  return "shard " + std::to_string(k) + " of " + std::to_string(st.shards.size()) + " on "
         + st.shards[k].where.text;
}

// Counts the epoch's samples and pushes up to the snapshot's store round
// `round` as done: the new shards count from zero. Sync and delayed rounds
// take every replica's push; an async or ssp store round is one push, and
// their snapshots are of epoch starts and ends only, all or none of the
// samples. roll_back_epoch also starts the replicas' reports over.
void count_rounds_before(coordinator_state& st, uint64_t round) {
  const uint64_t rounds_done = round - st.epoch_first_round;
  st.samples_before_heal = std::min<uint64_t>(st.setup.data.train->size(),
                                              rounds_done * st.setup.plan.config.batch_size);
  st.pushes_before_heal =
    st.setup.plan.traits.steps_per_round ? rounds_done * st.replicas.size() : rounds_done;
  st.last_stats = store_stats{}; // the new shards count from zero
}

void roll_back_epoch(coordinator_state& st, uint64_t round) {
  count_rounds_before(st, round);
  for (auto& replica : st.replicas) {
    if (!replica.reported)
      continue;
    auto& total = replica.total;
    const auto& report = replica.report;
    total.samples -= report.samples;
    total.loss_sum -= report.loss_sum;
    total.correct -= report.correct;
    total.pushes -= report.pushes;
    total.compute_seconds -= report.compute_seconds;
    total.wait_seconds -= report.wait_seconds;
    replica.reported = false;
  }
}

bool park_heal(coordinator_pointer self, const std::string& what, std::function<void()> then,
               size_t i, const spawn_outcome& outcome);

// Registers every replica with every shard, then calls `then`.
void watch_replicas(coordinator_pointer self, const std::function<void()>& then) {
  auto& st = self->state;
  const size_t shards = st.shards.size();
  gather<uint64_t>(
    st.replicas.size() * shards,
    [self, shards](size_t j) {
      auto& st = self->state;
      const auto& replica = st.replicas[j / shards];
      return self->request(st.shards[j % shards].actor, step_timeout(st), watch_atom::value,
                           static_cast<uint32_t>(j / shards), replica.actor, replica.membership);
    },
    st.members.guard([then](std::vector<uint64_t>&) { then(); }),
    st.members.guard([self](caf::error& err) { fail_run(self, err); }));
}

// Respawns the replicas from `from` on (on their nodes while they host
// replicas; the first that has no place on `joined`, a node that just
// joined), then registers every replica with every shard and calls `then`.
// A replica with no place waits for a join when --respawn-timeout and
// --accept-joins allow; false (the run failed) when it may not.
bool respawn_replicas(coordinator_pointer self, const std::string& what,
                      std::function<void()> then, size_t from = 0,
                      std::optional<size_t> joined = std::nullopt) {
  auto& st = self->state;
  for (size_t i = from; i < st.replicas.size(); ++i) {
    const size_t node = st.replicas[i].where.node;
    std::optional<size_t> first;
    if (st.nodes.hosts_replicas(node))
      first = node;
    else if (joined)
      first = std::exchange(joined, std::nullopt);
    auto outcome = spawn_in_place(self, i, first);
    if (!outcome.actor)
      return park_heal(self, what, std::move(then), i, outcome);
    self->monitor(*outcome.actor);
    st.replicas[i].actor = *outcome.actor;
    st.replicas[i].respawning = false;
  }
  watch_replicas(self, then);
  return true;
}

// Replica `i` of a heal found no place: the heal waits for a join when the
// run allows (true), else the run fails (false).
bool park_heal(coordinator_pointer self, const std::string& what, std::function<void()> then,
               size_t i, const spawn_outcome& outcome) {
  auto& st = self->state;
  const auto& c = st.setup.plan.config;
  const std::string tried = outcome.tried.empty() ? "" : " (" + outcome.tried + ")";
  if (outcome.failed_here || c.respawn_timeout_ms == 0 || !c.accept_joins) {
    fail_store(self, what + "; replica " + std::to_string(i) + " has no place to respawn" + tried);
    return false;
  }
  const uint64_t id = ++st.members.last_park_id;
  warn(st, what + "; replica " + std::to_string(i) + " has no place to respawn" + tried
             + ": waiting up to " + std::to_string(c.respawn_timeout_ms)
             + " ms for a node to join");
  st.members.waiting_heal = parked_heal{
    i, what,
    [self, what, then, i](size_t node) { respawn_replicas(self, what, then, i, node); }, id};
  self->delayed_send(caf::actor_cast<coordinator_actor>(self),
                     std::chrono::milliseconds(c.respawn_timeout_ms), deadline_atom::value, id);
  return true;
}

// Orders every replica the rest of the epoch from `params`' round.
void order_all(coordinator_pointer self, const params_msg& params) {
  auto& st = self->state;
  st.training = true;
  epoch_order order{st.epoch, params, params.round - st.epoch_first_round};
  for (size_t i = 0; i < st.replicas.size(); ++i) {
    order.residual = carried_residual(st, i);
    order_epoch(self, i, order);
  }
  st.carried_residuals.clear();
}

// Tells the observer of a heal whose replicas are ready; `told` says what
// was lost and where the shards went.
void report_heal(coordinator_pointer self, replacement_record record,
                 clock_type::time_point lost_at, const std::string& told) {
  auto& st = self->state;
  st.healing = false;
  const bool heal = record.kind == replacement_kind::store_heal;
  ++(heal ? st.heals : st.respawns);
  record.milliseconds =
    std::chrono::duration<double, std::milli>(clock_type::now() - lost_at).count();
  if (!heal)
    record.respawned_on = st.replicas[record.index].where.text;
  trace_instant(st, std::string(heal ? "store healed" : "rolled back") + " from round "
                      + std::to_string(record.round));
  warn(st, told + ", in " + std::to_string(static_cast<int64_t>(record.milliseconds)) + " ms");
  if (st.setup.observer.on_replacement)
    st.setup.observer.on_replacement(record);
  watch_recovery(self, heal ? "store_heal" : "respawn", record.round, record.membership,
                 lost_at);
}

// What a coordinator's warning says of a roll back to the snapshot of
// `round`: a store's heal, or a lost int8 replica's.
std::string rollback_text(const replacement_record& record, uint64_t round,
                          const std::string& moved) {
  if (record.kind != replacement_kind::store_heal)
    return "; the run rolled back to the snapshot of round " + std::to_string(round)
           + ", which keeps every replica's int8 residual, and respawned every replica";
  return "; the store healed from the snapshot of round " + std::to_string(round) + ", "
         + (moved.empty() ? "every shard in its place" : moved);
}

// Counts a heal from the snapshot of `round`; false (the run failed) once
// that snapshot has been healed from heals_per_snapshot times.
bool count_heal(coordinator_pointer self, uint64_t round, const std::string& what) {
  auto& [from, times] = self->state.heals_from;
  times = from == round ? times + 1 : 1;
  from = round;
  if (times < heals_per_snapshot)
    return true;
  fail_store(self, what + "; the store was lost " + std::to_string(times)
                     + " times since the snapshot of round " + std::to_string(round)
                     + ", so it is not healed again");
  return false;
}

// The store's state in the snapshot `parts`, or nothing when the run failed.
std::optional<store_start> snapshot_start(coordinator_pointer self,
                                          std::vector<checkpoint_part>& parts,
                                          const std::string& what) {
  auto& st = self->state;
  auto snapshot = assemble_checkpoint(checkpoint_target_for(st.setup.plan), parts);
  if (!snapshot) {
    fail_store(self, what + "; its snapshot does not assemble: " + describe(snapshot.error()));
    return std::nullopt;
  }
  if (snapshot->round < st.epoch_first_round && st.training) {
    fail_store(self, what + "; the newest snapshot is of an earlier epoch");
    return std::nullopt;
  }
  if (!count_heal(self, snapshot->round, what))
    return std::nullopt;
  st.carried_residuals = std::move(snapshot->residuals);
  store_start start;
  start.parameters = shared_floats{std::move(snapshot->params)};
  start.optimizer_state = shared_floats{std::move(snapshot->optimizer_state)};
  start.version = snapshot->version;
  start.optimizer_steps = snapshot->optimizer_steps;
  start.round = snapshot->round;
  start.learning_rate_factor = snapshot->learning_rate_factor;
  return start;
}

// Starts the shards again from the snapshot `parts`, then every replica:
// ordered from the snapshot's round, or on between epochs at an epoch's end.
void restart_from(coordinator_pointer self, std::vector<checkpoint_part>& parts,
                  replacement_record record, clock_type::time_point lost_at,
                  const std::string& what) {
  auto& st = self->state;
  const auto start = snapshot_start(self, parts, what);
  if (!start)
    return;
  const auto moved = respawn_store(self, *start, what);
  if (!moved)
    return;
  record.round = start->round;
  if (record.kind == replacement_kind::store_heal)
    record.respawned_on = st.shards[record.index].where.text;
  const std::string told = what + rollback_text(record, start->round, *moved);
  const batch_plan plan(st.setup.data.train->size(), st.setup.plan.config.batch_size,
                        st.replicas.size());
  const bool between = !st.training && st.epoch_recorded;
  if (between || start->round >= st.epoch_first_round + plan.rounds()) {
    // The run's start or an epoch's end: the phases between epochs go on,
    // an epoch not recorded yet with all its rounds done.
    if (st.epoch_recorded)
      st.last_stats = store_stats{};
    else
      count_rounds_before(st, start->round);
    respawn_replicas(self, what, [self, record, lost_at, told] {
      report_heal(self, record, lost_at, told);
      resume_after_heal(self);
    });
    return;
  }
  params_msg params;
  params.version = start->version;
  params.round = start->round;
  params.values = start->parameters;
  roll_back_epoch(st, start->round);
  respawn_replicas(self, what, [self, record, lost_at, told, params] {
    report_heal(self, record, lost_at, told);
    order_all(self, params);
  });
}

// Rolls the run back to the writer's newest snapshot and starts it again;
// `record` says what was lost, where and why.
void heal_store(coordinator_pointer self, replacement_record record, const std::string& what) {
  auto& st = self->state;
  record.epoch = st.epoch + 1;
  record.membership = st.members.next_epoch();
  record.noticed_at =
    std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  const auto lost_at = clock_type::now();
  st.healing = true;
  st.members.waiting_heal.reset(); // a heal overtaken by this one waits no more
  stop_run_actors(self);
  await_retired(self, st.members.guard([self, record, lost_at, what] {
    const auto& members = self->state.members;
    self->request(self->state.writer, step_timeout(self->state), restore_atom::value)
      .then(members.guard([self, record, lost_at, what](std::vector<checkpoint_part>& parts) {
              restart_from(self, parts, record, lost_at, what);
            }),
            members.guard([self, what](caf::error& err) {
              fail_store(self, what + "; the store cannot heal: " + describe(err));
            }));
  }));
}

// Rolls the run back for the store shard (store_heal) or replica (respawn)
// `index` lost at `where` (`node_lost`: with its node).
void roll_back(coordinator_pointer self, replacement_kind kind, size_t index, const site& where,
               bool node_lost, const std::string& reason, const std::string& what) {
  auto& st = self->state;
  if (node_lost)
    st.nodes.lose(where.node);
  const bool shard = kind == replacement_kind::store_heal;
  trace_instant(st, (shard ? "store shard " : "replica ") + std::to_string(index) + " lost");
  replacement_record record;
  record.kind = kind;
  record.index = static_cast<uint32_t>(index);
  record.lost_on = where.text;
  record.reason = reason;
  heal_store(self, std::move(record), what);
}

} // namespace

void lose_shard(coordinator_pointer self, size_t shard, const std::string& why,
                bool node_lost) {
  auto& st = self->state;
  st.shards[shard].alive = false; // nothing waits for its answers from now on
  if (st.shard_flushed)
    st.shard_flushed(shard); // a failed run was waiting for its last answer
  if (st.done)
    return;
  const std::string what = "the variable store (" + shard_text(st, shard) + ") died: " + why;
  if (!heals_store(st.setup.plan.config)) { // a healing store always has its writer
    fail_store(self, what);
    return;
  }
  roll_back(self, replacement_kind::store_heal, shard, st.shards[shard].where, node_lost, why,
            what);
}

bool rolls_back_replicas(const coordinator_state& st) {
  return keeps_residuals_by_round(st.setup.plan) && heals_store(st.setup.plan.config);
}

void roll_back_for_replica(coordinator_pointer self, size_t index, const std::string& what,
                           const std::string& reason, bool node_lost) {
  roll_back(self, replacement_kind::respawn, index, self->state.replicas[index].where, node_lost,
            reason, what);
}

bool resume_parked_heal(coordinator_pointer self, size_t node) {
  auto& waiting = self->state.members.waiting_heal;
  if (!waiting)
    return false;
  auto heal = std::move(*waiting);
  waiting.reset();
  heal.resume(node);
  return true;
}

bool parked_heal_deadline(coordinator_pointer self, uint64_t id) {
  auto& st = self->state;
  auto& waiting = st.members.waiting_heal;
  if (!waiting || waiting->id != id)
    return false;
  const std::string what = waiting->what;
  const size_t next = waiting->next;
  waiting.reset();
  if (!st.done)
    fail_store(self, what + "; replica " + std::to_string(next)
                       + " has no place to respawn, and no node joined within --respawn-timeout="
                       + std::to_string(st.setup.plan.config.respawn_timeout_ms) + " ms");
  return true;
}

void snapshot_store(coordinator_pointer self, const std::vector<float>& residuals,
                    std::function<void()> then) {
  auto& st = self->state;
  if (!heals_store(st.setup.plan.config)) {
    then();
    return;
  }
  gather_store_parts(self, [self, residuals, then](std::vector<checkpoint_part>& parts) {
    attach_residuals(parts, residuals, self->state.setup.plan.parameter_count);
    self->send(self->state.writer, snapshot_atom::value, std::move(parts));
    then();
  });
}

} // namespace troupe::detail
