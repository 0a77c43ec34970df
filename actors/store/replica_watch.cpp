// A store shard's watch over its replicas, siblings and coordinator.
#include "actors/store/replica_watch.hpp"

#include <string>

#include <caf/all.hpp>

#include "actors/store/norm_exchange.hpp"
#include "messages/errors.hpp"

namespace troupe::detail {

void on_down(store_pointer self, const caf::actor_addr& owner, caf::down_msg& msg) {
  auto& st = self->state;
  if (owner && msg.source == owner) {
    self->quit(make_troupe_error(troupe_errc::store_lost,
                                 "its coordinator is gone: " + describe(msg.reason)));
    return;
  }
  if (sibling_down(self, msg))
    return;
  const auto lost = st.replicas.lose(msg.source);
  if (!lost)
    return;
  const uint32_t index = *lost;
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
  // Only the newest actor of a replica pushes as it (fence_replaced).
  if (st.replicas.watch(index, replica.address(), membership))
    st.policy->on_replica_joined(index);
  else // a replica respawned in the place of one that died
    st.policy->on_replica_replaced(index, st);
  return st.replicas.find(index)->next_push_round.value_or(0);
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

} // namespace troupe::detail
