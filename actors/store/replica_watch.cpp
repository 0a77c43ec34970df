// A store shard's watch over its replicas, siblings and coordinator.
#include "actors/store/replica_watch.hpp"

#include <string>

#include <caf/all.hpp>

#include "actors/store/norm_exchange.hpp"
#include "messages/errors.hpp"

namespace troupe {

void on_down(store_pointer self, const caf::actor_addr& owner, caf::down_msg& msg) {
  auto& st = self->state;
  if (owner && msg.source == owner) {
    self->quit(make_troupe_error(troupe_errc::store_lost,
                                 "its coordinator is gone: " + describe(msg.reason)));
    return;
  }
  if (sibling_down(self, msg))
    return;
  auto replica = st.replicas.find(msg.source);
  if (replica == st.replicas.end())
    return;
  const auto index = replica->second;
  st.replicas.erase(replica);
  if (st.settings.on_replica_loss == replica_loss_action::respawn)
    return; // the round waits for the replica spawned in its place
  if (st.waits_for_norm()) { // after the steps that wait, as the pushes
    st.gate->in_order([self, index] { self->state.policy->on_replica_lost(index, self->state); });
    return;
  }
  st.policy->on_replica_lost(index, st);
  send_due_part(self);
}

caf::result<uint64_t> watch_replica(store_pointer self, uint32_t index, replica_actor& replica,
                                    uint64_t membership) {
  auto& st = self->state;
  // Taken while a clipped step waits for its norm: a respawn watches its new
  // actor before it orders it to push what that step waits for.
  // A handle to an actor that no longer exists arrives as null.
  if (!replica)
    return make_troupe_error(troupe_errc::unknown_replica,
                             "asked to watch replica " + std::to_string(index)
                               + ", an actor that no longer exists");
  self->monitor(replica);
  st.replica_membership[index] = membership;
  // Only the newest actor of a replica pushes as it (fence_replaced).
  for (auto it = st.replicas.begin(); it != st.replicas.end();)
    it = it->second == index ? st.replicas.erase(it) : std::next(it);
  st.replicas.emplace(replica.address(), index);
  if (st.watched.insert(index).second) {
    st.policy->on_replica_joined(index);
  } else { // a replica respawned in the place of one that died
    st.replaced.insert(index);
    st.policy->on_replica_replaced(index, st);
  }
  const auto next = st.next_push_round.find(index);
  return next == st.next_push_round.end() ? 0 : next->second;
}

caf::result<uint64_t> await_round(store_pointer self, uint64_t round) {
  auto& st = self->state;
  if (st.waits_for_norm())
    return caf::skip;
  if (round < st.policy->next_round())
    return st.policy->next_round();
  auto promise = self->make_response_promise<uint64_t>();
  st.awaited.emplace_back(round, promise);
  return promise;
}

} // namespace troupe
