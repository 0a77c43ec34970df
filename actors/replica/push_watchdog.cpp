// The watchdog of a replica's push: a tick every quarter step timeout.
#include "actors/replica/push_watchdog.hpp"

#include <algorithm>
#include <chrono>
#include <string>

#include <caf/all.hpp>

#include "messages/errors.hpp"

namespace troupe::detail {

namespace {

std::chrono::milliseconds step_timeout(const replica_state& st) {
  return std::chrono::milliseconds(st.setup->config.step_timeout_ms);
}

} // namespace

void arm_watchdog(replica_pointer self) {
  auto& st = self->state;
  if (st.watchdog_armed)
    return;
  st.watchdog_armed = true;
  const auto period = std::max(step_timeout(st) / 4, std::chrono::milliseconds{1});
  self->delayed_send(replica_actor{self}, period, tick_atom::value);
}

void check_watchdog(replica_pointer self) {
  auto& st = self->state;
  st.watchdog_armed = false;
  if (!st.waiting)
    return; // rearmed by the next push
  if (replica_state::clock_type::now() - st.pushed_at < step_timeout(st)) {
    arm_watchdog(self);
    return;
  }
  st.waiting = false;
  st.promise.deliver(make_troupe_error(
    troupe_errc::timeout, "replica " + std::to_string(st.setup->config.index) + ": push of round "
                            + std::to_string(st.first_round + st.next_round)
                            + " failed: no answer from the store within "
                            + std::to_string(st.setup->config.step_timeout_ms) + " ms"));
}

} // namespace troupe::detail
