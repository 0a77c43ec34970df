// A store shard's side of the exchange of sums of squares between shards.
#include "actors/store/norm_exchange.hpp"

#include <algorithm>
#include <string>

#include <caf/all.hpp>

#include "messages/errors.hpp"

namespace troupe::detail {

namespace {

norm_msg to_message(const store_state& st, uint64_t round, const square_sum& sum) {
  norm_msg msg;
  msg.round = round;
  msg.shard = st.settings.shard;
  msg.membership = st.settings.membership;
  msg.limbs.assign(sum.limbs.begin(), sum.limbs.end());
  msg.non_finite = sum.non_finite;
  return msg;
}

// Ends the shard when a sibling it needs a sum from is down: the
// coordinator heals the store or ends the run, as for any lost shard.
bool end_if_sibling_down(store_pointer self) {
  auto& st = self->state;
  const auto& down = st.siblings.down;
  const auto gone = std::find(down.begin(), down.end(), true);
  if (gone == down.end())
    return false;
  self->quit(make_troupe_error(troupe_errc::store_lost,
                               "store shard " + std::to_string(st.settings.shard)
                                 + " waits for the gradient norm of sibling shard "
                                 + std::to_string(gone - down.begin()) + ", which is gone"));
  return true;
}

// Sends the shard's sum of `round` to every sibling, one message each.
void send_sum(store_pointer self, uint64_t round, const square_sum& own) {
  auto& st = self->state;
  if (st.siblings.shards.empty()) { // the coordinator's list is on its way
    st.siblings.unsent.emplace(round, own);
    return;
  }
  if (end_if_sibling_down(self))
    return;
  const norm_msg msg = to_message(st, round, own);
  for (uint32_t k = 0; k < st.siblings.shards.size(); ++k)
    if (k != st.settings.shard)
      self->send(caf::actor_cast<store_actor>(st.siblings.shards[k]), norm_atom::value, msg);
}

} // namespace

void start_norm_exchange(store_pointer self) {
  auto& st = self->state;
  const float clipnorm = st.settings.optimizer.global_clipnorm;
  if (clipnorm <= 0.0f || !st.traits.steps_per_round)
    return;
  st.gate = std::make_unique<clip_gate>(st.settings.shard, st.settings.shards, clipnorm);
  if (st.settings.shards > 1)
    st.send_sum = [self](uint64_t round, const square_sum& own) { send_sum(self, round, own); };
}

void take_siblings(store_pointer self, std::vector<caf::actor>& shards) {
  auto& st = self->state;
  if (!st.gate || !st.siblings.shards.empty() || shards.size() != st.settings.shards)
    return;
  for (uint32_t k = 0; k < shards.size(); ++k)
    if (k != st.settings.shard && !shards[k]) // an actor that no longer exists arrives as null
      return;
  st.siblings.shards = std::move(shards);
  st.siblings.down.assign(st.siblings.shards.size(), false);
  for (uint32_t k = 0; k < st.siblings.shards.size(); ++k)
    if (k != st.settings.shard)
      self->monitor(st.siblings.shards[k]);
  auto unsent = std::move(st.siblings.unsent);
  st.siblings.unsent.clear();
  for (const auto& [round, own] : unsent)
    send_sum(self, round, own);
}

void take_sibling_sum(store_pointer self, const norm_msg& msg) {
  auto& st = self->state;
  if (!st.gate || msg.membership != st.settings.membership
      || msg.limbs.size() != square_sum::limb_count)
    return; // not of this store: a replaced shard's, or malformed
  square_sum sum;
  std::copy(msg.limbs.begin(), msg.limbs.end(), sum.limbs.begin());
  sum.non_finite = msg.non_finite;
  const bool waited = st.waits_for_norm();
  st.gate->heard(msg.round, msg.shard, sum);
  if (waited && !st.waits_for_norm())
    after_clipped_steps(self);
}

bool sibling_down(store_pointer self, const caf::down_msg& msg) {
  auto& st = self->state;
  auto& shards = st.siblings.shards;
  const auto found = std::find_if(shards.begin(), shards.end(), [&](const caf::actor& shard) {
    return shard && shard.address() == msg.source;
  });
  if (found == shards.end())
    return false;
  st.siblings.down[found - shards.begin()] = true;
  if (st.waits_for_norm())
    end_if_sibling_down(self);
  return true;
}

} // namespace troupe::detail
