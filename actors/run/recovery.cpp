// Timing a recovery to the close of the round it restarted from.
#include "actors/run/recovery.hpp"

#include <vector>

#include <caf/all.hpp>

#include "actors/replica/gather.hpp"

namespace troupe::detail {

void watch_recovery(coordinator_pointer self, const std::string& after, uint64_t round,
                    uint64_t membership, std::chrono::steady_clock::time_point noticed) {
  auto& st = self->state;
  if (!st.setup.plan.traits.steps_per_round || !st.setup.observer.on_recovery)
    return;
  recovery_record record;
  record.after = after;
  record.round = round;
  record.membership = membership;
  // The round closes within a step timeout of its last push, or the
  // replicas give up on it and the run fails.
  gather<uint64_t>(
    st.shards.size(),
    [self, round](size_t k) {
      return self->request(self->state.shards[k].actor, step_timeout(self->state),
                           await_atom::value, round);
    },
    st.members.guard([self, record, noticed](std::vector<uint64_t>&) mutable {
      auto& st = self->state;
      const auto now = std::chrono::steady_clock::now();
      record.closed_ms = std::chrono::duration<double, std::milli>(now - noticed).count();
      record.closed_at = std::chrono::duration<double>(
                           std::chrono::system_clock::now().time_since_epoch())
                           .count();
      trace_instant(st, "round " + std::to_string(record.round) + " closed after the "
                          + record.after);
      st.setup.observer.on_recovery(record);
    }),
    [](caf::error&) {}); // a heal or the run's end came first: nothing to record
}

} // namespace troupe::detail
