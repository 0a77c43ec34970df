// One link between two processes of a host (host_lanes.hpp): its two
// rings, the actors that stand here for the peer's actors, and the thread
// that reads its inbox. That thread runs the actor a frame readies itself,
// as a scheduler worker would: a hand-over to a worker would add a thread's
// wake-up to every crossing.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>

#include <caf/actor_control_block.hpp>
#include <caf/fwd.hpp>
#include <caf/node_id.hpp>
#include <caf/weak_intrusive_ptr.hpp>

#include "actors/cluster/shared_ring.hpp"

namespace troupe::detail {

/// Two rings with one peer process, and the actors that stand for its
/// actors here.
struct lane_link {
  caf::actor_system* system = nullptr;
  caf::node_id peer;
  std::shared_ptr<shared_ring> inbox;  // read here
  std::unique_ptr<shared_ring> outbox; // written here
  size_t largest_message = 0;          // the largest frame a proxy reserves
  std::thread reader;
  std::atomic<bool> stopping{false};
  std::atomic<bool> ended{false}; // the reader returned
  std::mutex proxies_lock;
  // Held by whoever sends through them (a replica's routes, a pending
  // answer's promise), so a node serving job after job keeps none of a job
  // that ended.
  std::unordered_map<caf::actor_id, caf::weak_actor_ptr> proxies;

  /// Returns the actor that stands for the peer's actor `id` here; null
  /// when max_proxies of them are in use.
  caf::strong_actor_ptr proxy_for(const std::shared_ptr<lane_link>& self, caf::actor_id id,
                                  caf::strong_actor_ptr fallback);
};

/// Delivers what `link`'s inbox brings until the hub stops it, the ring
/// closes, or the writer's process is gone (both rings close then).
void read_lane(std::shared_ptr<lane_link> link);

} // namespace troupe::detail
