// The round bookkeeping and reduction shared by sync and delayed.
#include "actors/policy/round_policy.hpp"

#include <string>
#include <utility>
#include <vector>

namespace troupe::detail {

bool round_policy::forget(uint32_t replica, bool share_used) {
  if (live_.erase(replica) == 0)
    return false;
  report_.losses.push_back(replica_loss{round_, replica, share_used});
  return true;
}

std::optional<push_refusal> refuse_outside_rounds(const gradient_push& push,
                                                  const std::set<uint32_t>& live,
                                                  uint64_t open_round, uint64_t rounds_ahead) {
  const auto replica = std::to_string(push.replica);
  const auto round = std::to_string(push.round);
  const auto store_round = std::to_string(open_round);
  if (live.count(push.replica) == 0)
    return push_refusal{troupe_errc::unknown_replica,
                        "replica " + replica + " is not a live member of this run"};
  if (push.round < open_round)
    return push_refusal{troupe_errc::stale_round,
                        "gradient from replica " + replica + " is for round " + round
                          + ", which is closed (the store is at round " + store_round + ")"};
  if (push.round > open_round + rounds_ahead)
    return push_refusal{
      troupe_errc::unexpected_round,
      "gradient from replica " + replica + " is for round " + round
        + (rounds_ahead == 0 ? ", but the store is at round " + store_round
                             : ", more than " + std::to_string(rounds_ahead)
                                 + " rounds ahead of the store's round " + store_round)};
  return std::nullopt;
}

push_refusal duplicate_push_refusal(const gradient_push& push) {
  return push_refusal{troupe_errc::duplicate_push,
                      "replica " + std::to_string(push.replica) + " pushed twice in round "
                        + std::to_string(push.round)};
}

void apply_round_mean(const std::map<uint32_t, gradient_push>& pushes, store_port& store) {
  uint64_t total = 0;
  std::vector<weighted_gradient> terms; // in replica order
  for (const auto& entry : pushes)
    total += entry.second.batch_size;
  for (const auto& entry : pushes)
    if (entry.second.batch_size > 0)
      terms.push_back(weighted_gradient{
        static_cast<float>(entry.second.batch_size) / static_cast<float>(total),
        entry.second.gradient.data()});
  if (terms.empty())
    return;
  if (terms.size() == 1) {
    store.apply_step(terms.front().gradient);
    return;
  }
  store.apply_weighted_step(terms);
}

} // namespace troupe::detail
