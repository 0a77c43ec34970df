// Lanes between the Troupe processes of one host: a replica's pushes to a
// store shard in another process of the same host, and the shard's answers,
// travel through a pair of shared-memory rings (shared_ring.hpp) instead of
// the middleman's sockets. A message keeps CAF's meaning: the rings carry
// its sender, message id and content, and an actor that stands for the far
// end (a lane proxy) delivers it on each side, so the store and the replica
// do not know which way it came. Everything else (monitors, orders,
// checkpoints) stays on the middleman, which also keeps telling a peer's
// death. Processes of one boot, one user and one network and mount
// namespace qualify; node programs take lanes unless TLS is on or
// --no-host-lanes says not to, and a coordinator of a plaintext run on
// nodes takes them for the shards and replicas it hosts.
//
// A link between two processes opens in one exchange: the asking side makes
// the ring it will read (offer), asks a shard of the other side with its
// name (lane_atom), the other side opens it and makes its own (accept_link),
// and the asking side opens that (complete).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <caf/actor_control_block.hpp>
#include <caf/expected.hpp>
#include <caf/fwd.hpp>
#include <caf/node_id.hpp>

namespace troupe::detail {

struct lane_link;  // lane_link.hpp
class shared_ring; // shared_ring.hpp

/// What comes before a message in a lane's frame; the message follows as
/// CAF's binary serializer writes it.
struct lane_frame_head {
  uint64_t target; // the receiver's actor id in the reading process
  uint64_t sender; // the sender's actor id in the writing process (0: none)
  uint64_t mid;    // the message id, as CAF numbers it
};

/// A link being asked for: the ring the asking side will read.
struct lane_offer {
  std::shared_ptr<shared_ring> inbox;
  std::string name;     // what the other side opens
  uint64_t capacity = 0; // bytes, each way
  std::string key;      // host_key()
};

/// Holds a process's lanes: each link's rings and reader thread.
class host_lanes {
public:
  /// The lanes of `system`'s process (one per system); the other side may
  /// ask for rings of at most `max_capacity` bytes.
  host_lanes(caf::actor_system& system, uint64_t max_capacity);
  /// Stops every reader thread and closes every ring.
  ~host_lanes();
  host_lanes(const host_lanes&) = delete;
  host_lanes& operator=(const host_lanes&) = delete;

  /// Returns the lanes of `system`'s process, or null when it has none.
  static host_lanes* of(const caf::actor_system& system);

  /// Says what makes processes share lanes: the boot, the user, and the
  /// network and mount namespaces.
  static std::string host_key();

  /// Returns the capacity of a link for messages of up to `largest_message` bytes.
  static uint64_t capacity_for(size_t largest_message);

  /// Returns a handle that sends to `target` through a lane already open
  /// to its process for messages of `largest_message` bytes; null if none.
  caf::strong_actor_ptr existing_route(const caf::strong_actor_ptr& target,
                                       size_t largest_message);

  /// Says whether a link to `target`'s process is worth asking for: another
  /// process that has not refused one.
  bool may_ask(const caf::strong_actor_ptr& target) const;

  /// Makes the ring to offer for a link with messages of `largest_message` bytes.
  caf::expected<lane_offer> offer(size_t largest_message);

  /// Opens the other side's ring `their_ring` for `offer` and returns a
  /// handle that sends to `target` through the new link.
  caf::expected<caf::strong_actor_ptr> complete(lane_offer offer, const std::string& their_ring,
                                                const caf::strong_actor_ptr& target);

  /// Notes that `peer` refused a link: it is not asked again.
  void refused(const caf::node_id& peer);

  /// Answers `peer`, which asks for a link: opens its ring `their_ring`,
  /// makes one of `capacity` bytes for it, and returns that ring's name.
  caf::expected<std::string> accept_link(const std::string& their_key,
                                         const std::string& their_ring, uint64_t capacity,
                                         const caf::node_id& peer);

  /// Counts the links open, both ways.
  size_t links() const;

private:
  void start(const std::shared_ptr<lane_link>& link);
  void reap_ended();

  caf::actor_system& system_;
  uint64_t max_capacity_;
  mutable std::mutex lock_;
  std::vector<std::shared_ptr<lane_link>> links_;
  std::vector<caf::node_id> refused_;
};

} // namespace troupe::detail
