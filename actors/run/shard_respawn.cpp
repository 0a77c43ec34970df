// Where a store heal respawns each shard, and the respawn itself.
#include "actors/run/shard_respawn.hpp"

#include <caf/all.hpp>

#include "messages/errors.hpp"

namespace troupe::detail {

namespace {

// Where shard `k` goes: its store node while it hosts shards, else the
// next one after it that does and has not `refused` it in this heal; here
// for a store that was here, or with --respawn=anywhere once no store node
// is left; nothing when no place can host it.
std::optional<size_t> choose_store_place(const coordinator_state& st, size_t k,
                                         const std::vector<bool>& refused) {
  const size_t own = st.shards[k].where.node;
  if (own == placement::here)
    return placement::here;
  const auto store_nodes = st.nodes.store_nodes(); // by store rank
  const size_t first = st.nodes.store_rank(own);
  for (size_t step = 0; step < store_nodes.size(); ++step) {
    const size_t node = store_nodes[(first + step) % store_nodes.size()];
    if (st.nodes.hosts_shards(node) && !refused[node])
      return node;
  }
  if (st.setup.plan.config.respawn_anywhere)
    return placement::here;
  return std::nullopt;
}

// Spawns shard `k` from plan.start where choose_store_place says, trying
// the next place when a node refuses the shard: for this heal when the
// shard is too large for its frames (a bad_config), for the run otherwise
// (its store device failed, or it is gone, which its actors' down messages
// tell); false (the run failed) when no place is left.
bool respawn_shard(coordinator_pointer self, uint32_t k, const std::string& what) {
  auto& st = self->state;
  std::string tried;
  std::vector<bool> refused(st.nodes.nodes.size(), false); // by node
  for (;;) {
    const auto place = choose_store_place(st, k, refused);
    if (!place) {
      fail_store(self, what + "; no live store node can host shard " + std::to_string(k)
                         + (tried.empty() ? "" : " (" + tried + ")")
                         + "; --respawn=anywhere lets this process host it");
      return false;
    }
    const std::string text =
      *place == placement::here ? "this process" : "node " + st.nodes.nodes[*place].address;
    auto spawned = st.setup.where.spawn_store(st.nodes.store_rank(*place),
                                              store_config_for(st.setup.plan, k, st.members.epoch),
                                              st.writer, caf::actor_cast<caf::actor>(self), {});
    if (spawned) {
      auto& shard = st.shards[k];
      shard.where = site{*place, text};
      self->monitor(*spawned);
      shard.actor = *spawned;
      shard.alive = true;
      self->send(*spawned, epoch_atom::value, uint64_t{st.epoch}, st.epoch_first_round);
      return true;
    }
    tried += (tried.empty() ? "" : "; ") + text + ": " + describe(spawned.error());
    if (*place == placement::here) {
      fail_store(self, what + "; shard " + std::to_string(k) + " cannot start here (" + tried
                         + ")");
      return false;
    }
    refused[*place] = true;
    if (!(spawned.error().category() == caf::atom("troupe")
          && spawned.error().code() == static_cast<uint8_t>(troupe_errc::bad_config)))
      st.nodes.refuse_shards(*place);
  }
}

} // namespace

void fail_store(coordinator_pointer self, const std::string& text) {
  fail_run(self, make_troupe_error(troupe_errc::store_lost, text));
}

std::optional<std::string> respawn_store(coordinator_pointer self, const store_start& start,
                                         const std::string& what) {
  auto& st = self->state;
  st.setup.plan.start = start;
  // A heal restores the epoch under way or the end of the last one, after
  // which the callbacks may have changed the rate: the coordinator's holds.
  st.setup.plan.start.learning_rate_factor = st.learning_rate_factor;
  st.members.store_epoch = st.members.epoch;
  std::string moved;
  bool placed = true;
  for (uint32_t k = 0; placed && k < st.shards.size(); ++k) {
    const std::string before = st.shards[k].where.text;
    placed = respawn_shard(self, k, what);
    const std::string& now = st.shards[k].where.text;
    if (placed && now != before)
      moved += (moved.empty() ? "" : ", ") + ("shard " + std::to_string(k) + " on ") + now;
  }
  st.setup.plan.start = store_start{};
  if (!placed)
    return std::nullopt;
  introduce_shards(self);
  return moved;
}

} // namespace troupe::detail
