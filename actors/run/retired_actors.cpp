// The actors a store heal stops, and the wait for their down messages.
#include "actors/run/retired_actors.hpp"

#include <algorithm>

#include <caf/all.hpp>

namespace troupe::detail {

namespace {

// Runs the heal waiting for the stopped actors, if any.
void go_on_retired(coordinator_state& st) {
  st.members.retired.clear();
  if (auto then = std::move(st.members.when_retired)) {
    st.members.when_retired = nullptr;
    then();
  }
}

} // namespace

void stop_run_actors(coordinator_pointer self) {
  auto& st = self->state;
  st.members.replace_actors();
  st.members.retired.clear();
  for (auto& replica : st.replicas) {
    if (replica.actor) {
      self->send_exit(replica.actor, caf::exit_reason::user_shutdown);
      st.members.retired.push_back({replica.actor.address(), replica.where.node});
      self->monitor(replica.actor);
    }
    replica.actor = replica_actor{};
    replica.respawning = true;
    replica.handover = residual_handover{}; // a move's, now answered to nobody
  }
  for (auto& shard : st.shards) {
    if (shard.alive) {
      self->send_exit(shard.actor, caf::exit_reason::user_shutdown);
      st.members.retired.push_back({shard.actor.address(), shard.where.node});
      self->monitor(shard.actor);
    }
    shard.actor = store_actor{};
    shard.alive = false;
  }
  st.members.parked.clear(); // every replica respawns now
}

void await_retired(coordinator_pointer self, std::function<void()> then) {
  auto& st = self->state;
  if (st.members.retired.empty()) {
    then();
    return;
  }
  st.members.when_retired = std::move(then);
  st.members.retired_deadline = ++st.members.last_park_id;
  self->delayed_send(caf::actor_cast<coordinator_actor>(self), step_timeout(st),
                     deadline_atom::value, st.members.retired_deadline);
}

bool retired_down(coordinator_pointer self, const caf::down_msg& msg) {
  auto& st = self->state;
  auto found = std::find_if(st.members.retired.begin(), st.members.retired.end(),
                            [&](const auto& r) { return r.address == msg.source; });
  if (found == st.members.retired.end())
    return false;
  if (msg.reason == caf::exit_reason::remote_link_unreachable)
    st.nodes.lose(found->node);
  st.members.retired.erase(found);
  if (st.members.retired.empty())
    go_on_retired(st);
  return true;
}

bool retired_deadline(coordinator_pointer self, uint64_t id) {
  auto& st = self->state;
  if (id != st.members.retired_deadline)
    return false;
  if (st.members.when_retired)
    go_on_retired(st);
  return true;
}

} // namespace troupe::detail
