// Opening a replica's lanes to its store shards.
#include "actors/replica/push_lanes.hpp"

#include <chrono>
#include <string>

#include <caf/all.hpp>

#include "actors/cluster/host_lanes.hpp"

namespace troupe::detail {

namespace {

// How long a shard may take to answer a lane request; the pushes go
// through the middleman meanwhile.
constexpr auto lane_timeout = std::chrono::seconds(10);

// The largest message of a replica and shard `k`: a push of the shard's
// slice (with an int8 push's residual, two slices) or its answer, and a few
// fields.
size_t largest_message(const store_group& store, size_t k) {
  return 2 * sizeof(float) * store.ranges[k].count + 65536;
}

void ask_lane(replica_pointer self, host_lanes& lanes, size_t k) {
  const auto& store = self->state.setup->store;
  const auto target = caf::actor_cast<caf::strong_actor_ptr>(store.shards[k]);
  const size_t largest = largest_message(store, k);
  if (auto route = lanes.existing_route(target, largest)) {
    self->state.setup->store.push_routes[k] = caf::actor_cast<store_actor>(route);
    return;
  }
  if (!lanes.may_ask(target))
    return;
  auto offer = lanes.offer(largest);
  if (!offer)
    return;
  const auto key = offer->key;
  const auto name = offer->name;
  const auto capacity = offer->capacity;
  self->request(store.shards[k], lane_timeout, lane_atom::value, key, name, capacity)
    .then(
      [self, k, target, offer = std::move(*offer)](std::string& theirs) mutable {
        auto* lanes = host_lanes::of(self->system());
        if (lanes == nullptr)
          return;
        if (auto route = lanes->complete(std::move(offer), theirs, target))
          self->state.setup->store.push_routes[k] = caf::actor_cast<store_actor>(*route);
      },
      [self, target](caf::error&) {
        if (auto* lanes = host_lanes::of(self->system()))
          lanes->refused(target->node());
      });
}

} // namespace

void open_push_lanes(replica_pointer self) {
  auto* lanes = host_lanes::of(self->system());
  if (lanes == nullptr)
    return;
  auto& store = self->state.setup->store;
  store.push_routes = store.shards;
  for (size_t k = 0; k < store.shards.size(); ++k)
    ask_lane(self, *lanes, k);
}

} // namespace troupe::detail
