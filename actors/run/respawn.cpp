// Respawning a lost replica in its place.
#include "actors/run/respawn.hpp"

#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>
#include <vector>

#include <caf/all.hpp>

#include "actors/replica/gather.hpp"
#include "actors/replica/store_group.hpp"
#include "actors/run/recovery.hpp"
#include "actors/run/residual_handover.hpp"
#include "actors/run/shard_questions.hpp"
#include "messages/errors.hpp"

namespace troupe::detail {

namespace {

using clock_type = std::chrono::steady_clock;

// Where a respawn goes: the live node hosting the fewest replicas (the first
// of equals) below --max-replicas-per-node, or here for a local run or, with
// --respawn=anywhere, once no node is left; nothing when no place can host it.
std::optional<size_t> choose_place(const coordinator_state& st) {
  const bool started_here = st.setup.plan.config.nodes.empty();
  const auto hosted = replicas_per_node(st);
  const auto bound = st.setup.plan.config.max_replicas_per_node;
  std::optional<size_t> best;
  for (size_t k : st.nodes.replica_nodes())
    if (st.nodes.hosts_replicas(k) && (bound == 0 || hosted[k] < bound)
        && (!best || hosted[k] < hosted[*best]))
      best = k;
  if (!best && (started_here || st.setup.plan.config.respawn_anywhere))
    return placement::here;
  return best;
}

std::string place_text(const coordinator_state& st, size_t place, const replica_config& cfg) {
  if (place == placement::here)
    return cfg.device;
  return "node " + st.nodes.nodes[place].address + " (" + cfg.device + ")";
}

// No place can host replica `index` now: with --respawn-timeout and joins
// accepted, its respawn waits for a node to join; else the run ends.
void no_place_for(coordinator_pointer self, parked_respawn waiting,
                  const spawn_outcome& outcome) {
  auto& st = self->state;
  const auto& c = st.setup.plan.config;
  if (!outcome.failed_here && c.respawn_timeout_ms > 0 && c.accept_joins) {
    waiting.id = ++st.members.last_park_id;
    const uint64_t id = waiting.id;
    warn(st, waiting.what + "; no live node can host its respawn: waiting up to "
               + std::to_string(c.respawn_timeout_ms) + " ms for a node to join");
    st.members.parked.push_back(std::move(waiting));
    self->delayed_send(caf::actor_cast<coordinator_actor>(self),
                       std::chrono::milliseconds(c.respawn_timeout_ms), deadline_atom::value,
                       id);
    return;
  }
  const std::string tried = outcome.tried.empty() ? "" : " (" + outcome.tried + ")";
  if (outcome.failed_here) {
    fail_run(self, make_troupe_error(troupe_errc::replica_lost,
                                     waiting.what + "; its respawn here failed" + tried));
    return;
  }
  fail_run(self, make_troupe_error(
                   troupe_errc::replica_lost,
                   waiting.what + "; no live node can host its respawn" + tried
                     + (c.respawn_anywhere ? std::string()
                                           : "; --respawn=anywhere lets this process host it")));
}

// How often one replica may be lost in one round before the run gives up:
// a share that kills every actor computing it must not respawn forever,
// while a node lost just after taking a respawn is survived.
constexpr uint32_t losses_per_round = 3;

// Joins the shards' parameters of the open round, or fails the run when
// the replica was lost losses_per_round times in that round.
std::optional<params_msg> round_params(coordinator_pointer self, size_t index,
                                       std::vector<params_msg>& parts, const std::string& what,
                                       bool moved) {
  auto& st = self->state;
  std::shared_ptr<std::vector<float>> copy;
  auto joined = join_params(parts, st.setup.plan.parameter_count, copy, true);
  if (moved)
    return joined;
  auto& [round, losses] = st.replicas[index].losses_in_round;
  losses = round == joined.round ? losses + 1 : 1;
  round = joined.round;
  if (losses >= losses_per_round) {
    fail_run(self, make_troupe_error(troupe_errc::replica_lost,
                                     what + "; it was lost " + std::to_string(losses)
                                       + " times in round " + std::to_string(joined.round)
                                       + ", so its share is not respawned again"));
    return std::nullopt;
  }
  return joined;
}

// Orders the new actor of replica `index` the rest of the epoch from the
// round `parts` (every shard's parameters, at one version) open, or from
// `resume` (its next push: policy_traits::resumes_pushes), and records the
// respawn.
void start_from(coordinator_pointer self, size_t index, const std::string& what,
                replacement_record record, clock_type::time_point lost_at,
                std::vector<params_msg>& parts, std::optional<uint64_t> resume) {
  auto& st = self->state;
  if (resume)
    for (auto& part : parts)
      part.round = std::max(*resume, st.epoch_first_round);
  const bool moved = record.kind == replacement_kind::move;
  auto params = round_params(self, index, parts, what, moved);
  if (!params)
    return;
  auto& slot = st.replicas[index];
  slot.respawning = false;
  ++st.respawns;
  record.round = params->round;
  record.respawned_on = slot.where.text;
  record.membership = slot.membership;
  record.milliseconds =
    std::chrono::duration<double, std::milli>(clock_type::now() - lost_at).count();
  const std::string verb = moved ? " moved to " : " respawned on ";
  trace_instant(st, "replica " + std::to_string(index) + verb + record.respawned_on
                      + " at round " + std::to_string(record.round));
  if (!moved)
    warn(st, what + "; respawned on " + record.respawned_on + " at round "
               + std::to_string(record.round) + " in "
               + std::to_string(static_cast<int64_t>(record.milliseconds)) + " ms");
  if (st.setup.observer.on_replacement)
    st.setup.observer.on_replacement(record);
  if (!moved)
    watch_recovery(self, "respawn", params->round, record.membership, lost_at);
  if (!slot.reported) // else the next epoch's order reaches it
    order_replacement(self, index,
                      epoch_order{st.epoch, *params, params->round - st.epoch_first_round});
}

// Calls `then` with every shard's parameters at the open round. A round the
// dead actor's push closed on some shards only leaves those one version
// ahead: they answer from the version before, which they still hold, and
// answer the new actor's repeat of that round without using it.
template <class Then>
void settle_round(coordinator_pointer self, std::vector<params_msg> parts,
                  const std::string& what, Then then) {
  uint64_t low = UINT64_MAX, high = 0;
  for (const auto& part : parts) {
    low = std::min(low, part.version);
    high = std::max(high, part.version);
  }
  if (low == high) {
    then(parts);
    return;
  }
  std::vector<size_t> ahead;
  for (size_t k = 0; k < parts.size(); ++k)
    if (parts[k].version == high)
      ahead.push_back(k);
  auto fail = self->state.members.guard([self, what, low, high](caf::error& err) {
    fail_run(self, make_troupe_error(troupe_errc::replica_lost,
                                     what + "; after it the store's shards stand at versions "
                                       + std::to_string(low) + " and " + std::to_string(high)
                                       + ", and the ones ahead no longer hold version "
                                       + std::to_string(low) + " (" + describe(err) + ")"));
  });
  if (high != low + 1) {
    caf::error err = make_troupe_error(troupe_errc::bad_config, "more than one round apart");
    fail(err);
    return;
  }
  gather<params_msg>(
    ahead.size(),
    [self, ahead, low](size_t j) {
      return self->request(self->state.shards[ahead[j]].actor, step_timeout(self->state),
                           params_atom::value, low);
    },
    [self, parts, ahead, then,
     generation = self->state.members.generation](std::vector<params_msg>& before) mutable {
      if (!current_answers(self, generation, ahead, before))
        return;
      for (size_t j = 0; j < ahead.size(); ++j)
        parts[ahead[j]] = std::move(before[j]);
      then(parts);
    },
    fail);
}

// Orders the new actor the rest of the epoch once every shard has answered
// with its parameters: from the open round (settled to one version), or,
// given `next` (the round after the last push of its replica every shard
// took: policy_traits::resumes_pushes), from there with the current ones,
// where a shard that took that round's push already answers the new
// actor's without using it.
void order_from_shards(coordinator_pointer self, size_t index, const std::string& what,
                       replacement_record record, clock_type::time_point lost_at,
                       std::optional<uint64_t> next) {
  auto from_settled = self->state.members.guard(
    [self, index, what, record, lost_at](std::vector<params_msg>& settled) {
      start_from(self, index, what, record, lost_at, settled, std::nullopt);
    });
  ask_every_shard<params_msg>(
    self,
    [self](size_t k) {
      return self->request(self->state.shards[k].actor, step_timeout(self->state),
                           params_atom::value);
    },
    [self, index, what, record, lost_at, next, from_settled](std::vector<params_msg>& parts) {
      if (next) {
        start_from(self, index, what, record, lost_at, parts, next);
        return;
      }
      settle_round(self, parts, what, from_settled);
    });
}

// Spawns the new actor of a waiting respawn (on `first` if it can),
// registers it with every shard and orders it from the open round (or,
// under policy_traits::resumes_pushes, from its replica's next push).
void place_and_order(coordinator_pointer self, parked_respawn waiting,
                     std::optional<size_t> first) {
  auto& st = self->state;
  const size_t index = waiting.index;
  auto outcome = spawn_in_place(self, index, first);
  if (!outcome.actor) {
    no_place_for(self, std::move(waiting), outcome);
    return;
  }
  const auto replica = *outcome.actor;
  self->monitor(replica);
  st.replicas[index].actor = replica;
  // Each shard forgets the dead actor's push of the open round when it
  // watches the new one; the round's parameters are read after that, so no
  // shard can close the round in between.
  gather<uint64_t>(
    st.shards.size(),
    [self, index, replica](size_t k) {
      return self->request(self->state.shards[k].actor, step_timeout(self->state),
                           watch_atom::value, static_cast<uint32_t>(index), replica,
                           self->state.replicas[index].membership);
    },
    st.members.guard([self, waiting](std::vector<uint64_t>& next_pushes) {
      std::optional<uint64_t> next;
      if (self->state.setup.plan.traits.resumes_pushes)
        next = *std::min_element(next_pushes.begin(), next_pushes.end());
      order_from_shards(self, waiting.index, waiting.what, waiting.record, waiting.lost_at,
                        next);
    }),
    st.members.guard([self](caf::error& err) { fail_run(self, err); }));
}

// Puts a new actor in replica `index`'s place (on `first` if it can) and
// orders it from the open round; `record` says why.
void replace_replica(coordinator_pointer self, size_t index, const std::string& what,
                     replacement_record record, std::optional<size_t> first) {
  auto& st = self->state;
  record.index = static_cast<uint32_t>(index);
  record.epoch = st.epoch + 1;
  st.members.next_epoch();
  record.lost_on = st.replicas[index].where.text;
  record.noticed_at = std::chrono::duration<double>(
                        std::chrono::system_clock::now().time_since_epoch())
                        .count();
  st.replicas[index].respawning = true;
  place_and_order(self, parked_respawn{index, what, std::move(record), clock_type::now(), 0},
                  first);
}

} // namespace

spawn_outcome spawn_in_place(coordinator_pointer self, size_t index,
                             std::optional<size_t> first) {
  auto& st = self->state;
  auto cfg = replica_config_for(st.setup.plan, static_cast<uint32_t>(index), st.members.epoch);
  spawn_outcome outcome;
  for (;;) {
    const auto place = first ? first : choose_place(st);
    first.reset();
    if (!place)
      return outcome;
    auto spawned =
      st.setup.where.spawn_replica(st.nodes.replica_rank(*place), cfg, shard_actors(st));
    if (spawned) {
      auto& slot = st.replicas[index];
      slot.where = site{*place, place_text(st, *place, cfg)};
      slot.membership = cfg.membership;
      outcome.actor = *spawned;
      return outcome;
    }
    outcome.tried += (outcome.tried.empty() ? "" : "; ") + place_text(st, *place, cfg) + ": "
                     + describe(spawned.error());
    if (*place == placement::here) {
      outcome.failed_here = true;
      return outcome;
    }
    // A node that is gone is lost through its actors' down messages; one
    // that lives on keeps serving its store shards.
    st.nodes.refuse_replicas(*place);
  }
}

std::vector<size_t> replicas_per_node(const coordinator_state& st) {
  std::vector<size_t> hosted(st.nodes.nodes.size(), 0);
  for (const auto& replica : st.replicas)
    if (replica.where.node != placement::here && replica.alive)
      ++hosted[replica.where.node];
  return hosted;
}

void respawn_replica(coordinator_pointer self, size_t index, const std::string& what,
                     const std::string& reason, bool node_lost) {
  auto& st = self->state;
  trace_instant(st, "replica " + std::to_string(index) + " lost");
  if (node_lost)
    st.nodes.lose(st.replicas[index].where.node);
  replacement_record record;
  record.reason = reason;
  replace_replica(self, index, what, std::move(record), std::nullopt);
}

void move_replica(coordinator_pointer self, size_t index, size_t node,
                  const std::string& why) {
  auto& st = self->state;
  // The old actor stops first (under int8 once it handed its residual over);
  // a push it still sends is fenced, and one the shards hold is forgotten
  // when they watch the new one.
  if (st.setup.plan.config.wire == float_codec::int8)
    ask_handover(self, index, st.replicas[index].actor);
  else
    self->send_exit(st.replicas[index].actor, caf::exit_reason::user_shutdown);
  replacement_record record;
  record.kind = replacement_kind::move;
  record.reason = why;
  const std::string what = "replica " + std::to_string(index) + " on "
                           + st.replicas[index].where.text + " moving (" + why + ")";
  replace_replica(self, index, what, std::move(record), node);
}

void place_parked(coordinator_pointer self, size_t node) {
  auto& st = self->state;
  auto waiting = std::move(st.members.parked);
  st.members.parked.clear();
  for (auto& respawn : waiting)
    place_and_order(self, std::move(respawn), node);
}

void respawn_deadline(coordinator_pointer self, uint64_t id) {
  auto& st = self->state;
  auto parked = std::find_if(st.members.parked.begin(), st.members.parked.end(),
                             [id](const parked_respawn& p) { return p.id == id; });
  if (st.done || parked == st.members.parked.end())
    return;
  const std::string what = parked->what;
  st.members.parked.erase(parked);
  fail_run(self, make_troupe_error(troupe_errc::replica_lost,
                                   what + "; no node joined within --respawn-timeout="
                                     + std::to_string(st.setup.plan.config.respawn_timeout_ms)
                                     + " ms to host its respawn"));
}

} // namespace troupe::detail
