// What a store shard knows of each replica that pushes to it, one entry per
// replica: which actor is the replica now (only its newest actor pushes as
// it), the membership epoch that actor was watched in, whether it took a
// dead one's place, and the round after the last of its pushes the shard
// took (where a respawned actor goes on).
#pragma once

#include <cstdint>
#include <map>
#include <optional>

#include <caf/actor_addr.hpp>

namespace troupe::detail {

/// Holds one replica's entry.
struct replica_entry {
  caf::actor_addr actor;      // its live actor; none before a watch and once it died
  uint64_t membership = 0;    // the membership epoch its actor was watched in
  bool watched = false;       // an actor of it was watched
  bool replaced = false;      // watched again: a respawned actor in a dead one's place
  std::optional<uint64_t> next_push_round; // the round after its last push taken here
};

/// Holds the entries by replica index.
class replica_table {
public:
  /// Watches `actor` as replica `index` in `membership`; true when the
  /// replica is new to the shard, false when the actor replaces another.
  bool watch(uint32_t index, const caf::actor_addr& actor, uint64_t membership) {
    replica_entry& entry = entries_[index];
    entry.actor = actor;
    entry.membership = membership;
    const bool first = !entry.watched;
    entry.watched = true;
    entry.replaced = entry.replaced || !first;
    return first;
  }

  /// Returns the replica whose live actor `actor` was, now lost; nothing
  /// for an actor that is no replica's (or no longer).
  std::optional<uint32_t> lose(const caf::actor_addr& actor) {
    for (auto& [index, entry] : entries_)
      if (entry.actor && entry.actor == actor) {
        entry.actor = caf::actor_addr{};
        return index;
      }
    return std::nullopt;
  }

  /// Tells whether `actor` is replica `index`'s live actor.
  bool is_live(uint32_t index, const caf::actor_addr& actor) const {
    const replica_entry* entry = find(index);
    return entry && entry->actor && entry->actor == actor;
  }

  /// Notes that the shard took replica `index`'s push of `round`.
  void took_push(uint32_t index, uint64_t round) { entries_[index].next_push_round = round + 1; }

  /// Returns replica `index`'s entry, or null.
  const replica_entry* find(uint32_t index) const {
    const auto found = entries_.find(index);
    return found == entries_.end() ? nullptr : &found->second;
  }

  /// Returns how many replicas have a live actor.
  uint32_t live() const {
    uint32_t count = 0;
    for (const auto& [index, entry] : entries_)
      count += entry.actor ? 1 : 0;
    return count;
  }

private:
  std::map<uint32_t, replica_entry> entries_;
};

} // namespace troupe::detail
