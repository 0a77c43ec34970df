// The deterministic-delay update policy.
#include "actors/policy/delayed_policy.hpp"

#include <algorithm>
#include <string>

#include "actors/policy/round_policy.hpp"

namespace troupe::detail {

policy_descriptor delayed_policy_descriptor() {
  policy_descriptor d;
  d.name = "delayed";
  d.summary = "every gradient exactly --staleness versions stale, rounds reduced in "
              "replica order (reproducible)";
  d.settings = {"staleness"};
  d.refuse = [](const policy_settings& s) -> std::string {
    return s.staleness == 0 ? "--mode=delayed needs --staleness=K with K >= 1 (K = 0 is sync)"
                            : "";
  };
  d.traits = [](const policy_settings& s) {
    policy_traits t;
    t.reproducible = true;
    t.steps_per_round = true;
    t.reports_staleness = true;
    t.respawns = true;
    t.resumes_pushes = true;
    t.history_depth = s.staleness > 1 ? s.staleness - 1 : 0;
    return t;
  };
  d.make = [](const policy_settings& s) -> std::unique_ptr<update_policy> {
    return std::make_unique<delayed_policy>(s.staleness);
  };
  return d;
}

std::optional<push_refusal> delayed_policy::refusal(const gradient_push& push) const {
  if (auto refused = refuse_outside_rounds(push, live_, round_, lag_))
    return refused;
  auto round_pushes = pending_.find(push.round);
  if (round_pushes != pending_.end() && round_pushes->second.count(push.replica) > 0)
    return duplicate_push_refusal(push);
  return std::nullopt;
}

std::optional<push_refusal> delayed_policy::on_push(gradient_push push, store_port& store) {
  if (auto refused = refusal(push))
    return refused;
  const uint64_t round = push.round;
  const uint64_t ticket = push.ticket;
  pending_[round].emplace(push.replica, std::move(push));
  // Its answer is the version of store round `round + 1 - K`; it exists unless
  // that round is still ahead (round == round_ + K). Answered before the
  // round may close below, so the step cannot change what it carries.
  if (round + 1 <= round_ + lag_)
    store.answer_from(ticket, round_ + lag_ - 1 - round);
  else
    held_.push_back(held_answer{round, ticket});
  close_complete_rounds(store);
  return std::nullopt;
}

void delayed_policy::on_replica_lost(uint32_t replica, store_port& store) {
  auto open = pending_.find(round_);
  const bool pushed = open != pending_.end() && open->second.count(replica) > 0;
  if (!forget(replica, pushed))
    return;
  // Its pushes for later rounds go: the survivors re-plan its share from the
  // open round on, and would train those samples twice.
  for (auto& entry : pending_)
    if (entry.first > round_)
      entry.second.erase(replica);
  close_complete_rounds(store);
}

void delayed_policy::close_complete_rounds(store_port& store) {
  for (;;) {
    auto open = pending_.find(round_);
    if (open == pending_.end() || open->second.empty())
      return;
    for (auto replica : live_)
      if (open->second.count(replica) == 0)
        return;
    apply_round_mean(open->second, store);
    pending_.erase(open); // releases the gradients
    ++round_;
    // Pushes of the new round + K - 1 waited for exactly this version.
    std::vector<uint64_t> due;
    held_.erase(std::remove_if(held_.begin(), held_.end(),
                               [&](const held_answer& h) {
                                 if (h.round + 1 > round_ + lag_)
                                   return false;
                                 due.push_back(h.ticket);
                                 return true;
                               }),
                held_.end());
    for (auto ticket : due)
      store.answer_from(ticket, 0);
    store.round_closed();
  }
}

} // namespace troupe::detail
