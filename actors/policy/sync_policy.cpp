// The synchronous update policy.
#include "actors/policy/sync_policy.hpp"

#include <string>

#include "actors/policy/round_policy.hpp"

namespace troupe::detail {

policy_descriptor sync_policy_descriptor() {
  policy_descriptor d;
  d.name = "sync";
  d.summary = "one step per round from every replica's gradient, in replica order "
              "(reproducible)";
  d.settings = {"backup-replicas"};
  d.traits = [](const policy_settings& s) {
    policy_traits t;
    t.reproducible = s.backup_replicas == 0; // with backups, arrival decides
    t.steps_per_round = true;
    // Dropped late gradients are stale; without backups every push is fresh.
    t.reports_staleness = s.backup_replicas > 0;
    // A late replica still reads the parameters while its round closes without it.
    t.replicas_wait_for_rounds = s.backup_replicas == 0;
    t.respawns = s.backup_replicas == 0;
    return t;
  };
  d.make = [](const policy_settings& s) -> std::unique_ptr<update_policy> {
    return std::make_unique<sync_policy>(s.backup_replicas);
  };
  return d;
}

std::optional<push_refusal> sync_policy::refusal(const gradient_push& push) const {
  if (auto refused = refuse_outside_rounds(push, live_, round_, 0))
    return refused;
  if (pushed_.count(push.replica) > 0)
    return duplicate_push_refusal(push);
  return std::nullopt;
}

std::optional<push_refusal> sync_policy::on_push(gradient_push push, store_port& store) {
  if (backups_ > 0 && push.round < round_ && live_.count(push.replica) > 0) {
    // Late for a round that closed without it: a backup's gradient, dropped.
    ++report_.dropped;
    push.gradient = shared_floats{};
    store.answer(push.ticket);
    return std::nullopt;
  }
  if (push.round + 1 == round_ && owed_.erase(push.replica) > 0) {
    store.answer_unused(push.ticket); // this round used the dead actor's push
    return std::nullopt;
  }
  if (auto refused = refusal(push))
    return refused;
  const auto replica = push.replica;
  pushed_.emplace(replica, std::move(push));
  const auto round = round_;
  close_round_if_complete(store);
  if (round_ != round) { // this push closed the round: it came last
    auto& waited_on = report_.waited_on;
    if (waited_on.size() <= replica)
      waited_on.resize(replica + 1);
    ++waited_on[replica];
  }
  return std::nullopt;
}

void sync_policy::on_replica_lost(uint32_t replica, store_port& store) {
  // A gradient it already pushed this round still counts: it is valid work.
  if (forget(replica, pushed_.count(replica) > 0))
    close_round_if_complete(store);
}

void sync_policy::on_replica_replaced(uint32_t replica, store_port& store) {
  auto held = pushed_.find(replica);
  if (held == pushed_.end()) {
    // Its push closed the round before here but not on every shard: the new
    // actor pushes that round again, for the shards that still wait for it.
    if (last_closed_.count(replica) > 0)
      owed_.insert(replica);
    return;
  }
  store.refuse(held->second.ticket, troupe_errc::replica_lost,
               "replica " + std::to_string(replica) + " was replaced in round "
                 + std::to_string(round_) + "; its new actor pushes this round again");
  pushed_.erase(held);
}

void sync_policy::close_round_if_complete(store_port& store) {
  if (pushed_.empty())
    return;
  size_t live_pushed = 0;
  for (auto replica : live_)
    live_pushed += pushed_.count(replica);
  const size_t needed = live_.size() > backups_ ? live_.size() - backups_ : 1;
  if (live_pushed < needed)
    return;
  apply_round_mean(pushed_, store);
  // Release the gradients before answering, so replicas can reuse their buffers.
  std::vector<uint64_t> tickets;
  last_closed_.clear();
  owed_.clear(); // a replaced replica's repeat of the round before came already
  for (const auto& entry : pushed_) {
    tickets.push_back(entry.second.ticket);
    last_closed_.insert(entry.first);
  }
  pushed_.clear();
  ++round_;
  for (auto ticket : tickets)
    store.answer(ticket);
  store.round_closed();
}

} // namespace troupe::detail
