// Stopping a policy at the first replica loss.
#include "actors/policy/stop_on_loss.hpp"

namespace troupe::detail {

std::optional<push_refusal> stop_on_loss::on_push(gradient_push push, store_port& store) {
  if (!stopped_.empty())
    return push_refusal{troupe_errc::replica_lost, stopped_};
  return inner_->on_push(std::move(push), store);
}

void stop_on_loss::on_replica_lost(uint32_t replica, store_port& store) {
  if (!stopped_.empty())
    return;
  stopped_ = "replica " + std::to_string(replica) + " died: store shard "
             + std::to_string(shard_) + " takes no more pushes (--on-replica-loss=abort)";
  store.refuse_open(troupe_errc::replica_lost, stopped_);
}

} // namespace troupe::detail
