// The bounded-staleness update policy.
#include "actors/policy/ssp_policy.hpp"

#include <algorithm>

#include "actors/policy/sync_policy.hpp"

namespace troupe::detail {

policy_descriptor ssp_policy_descriptor() {
  policy_descriptor d;
  d.name = "ssp";
  d.summary = "async, with no replica more than --staleness pushes ahead of the slowest";
  d.settings = {"staleness", "staleness-lr"};
  // Staleness 0 is lockstep: sync, with its reduction and its bits.
  d.traits = [lockstep = sync_policy_descriptor().traits](const policy_settings& s) {
    if (s.staleness == 0)
      return lockstep(policy_settings{});
    policy_traits t;
    t.reports_staleness = true;
    t.respawns = true;
    t.resumes_pushes = true;
    return t;
  };
  d.make = [](const policy_settings& s) -> std::unique_ptr<update_policy> {
    if (s.staleness == 0)
      return std::make_unique<sync_policy>();
    return std::make_unique<ssp_policy>(s);
  };
  return d;
}

std::optional<push_refusal> ssp_policy::on_push(gradient_push push, store_port& store) {
  ++pushes_;
  if (push.batch_size > 0)
    store.apply_step(push.gradient.data(), staleness_lr_scale(settings_, push.staleness));
  push.gradient = shared_floats{}; // released before any answer
  auto clock = clocks_.find(push.replica);
  if (clock == clocks_.end()) { // not watched (or lost): nobody to wait for it
    store.answer(push.ticket);
    return std::nullopt;
  }
  ++clock->second;
  held_.push_back(held_answer{push.replica, push.ticket});
  answer_those_in_bounds(store);
  return std::nullopt;
}

void ssp_policy::on_replica_joined(uint32_t replica) {
  // A replica that joins late starts level with the slowest, not behind it.
  clocks_.emplace(replica, clocks_.empty() ? 0 : slowest());
}

void ssp_policy::on_replica_lost(uint32_t replica, store_port& store) {
  clocks_.erase(replica);
  held_.erase(std::remove_if(held_.begin(), held_.end(),
                             [replica](const held_answer& h) { return h.replica == replica; }),
              held_.end());
  answer_those_in_bounds(store);
}

uint64_t ssp_policy::slowest() const {
  uint64_t least = UINT64_MAX;
  for (const auto& entry : clocks_)
    least = std::min(least, entry.second);
  return clocks_.empty() ? 0 : least;
}

void ssp_policy::answer_those_in_bounds(store_port& store) {
  const uint64_t bound = slowest() + staleness_;
  std::vector<held_answer> still_held;
  std::vector<uint64_t> due;
  for (const auto& h : held_) {
    if (clocks_.count(h.replica) > 0 && clocks_.at(h.replica) > bound)
      still_held.push_back(h);
    else
      due.push_back(h.ticket);
  }
  held_ = std::move(still_held);
  for (auto ticket : due)
    store.answer(ticket);
}

} // namespace troupe::detail
