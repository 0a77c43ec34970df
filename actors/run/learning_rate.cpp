// The rate of a run's last step, and a callback's factor sent to the store.
#include "actors/run/learning_rate.hpp"

#include <vector>

#include <caf/all.hpp>

#include "actors/replica/gather.hpp"
#include "model/optim/lr_schedule.hpp"

namespace troupe::detail {

double last_step_learning_rate(const coordinator_state& st, uint64_t version) {
  const auto config =
    with_learning_rate_factor(st.setup.plan.config.optimizer, st.learning_rate_factor);
  return scheduled_learning_rate(config, version == 0 ? 0 : version - 1);
}

void scale_learning_rate(coordinator_pointer self, float factor, std::function<void()> then) {
  auto& st = self->state;
  if (factor == 1.0f) {
    then();
    return;
  }
  st.learning_rate_factor *= factor;
  const float now = st.learning_rate_factor;
  gather<bool>(
    st.shards.size(),
    [self, now](size_t k) {
      return self->request(self->state.shards[k].actor, step_timeout(self->state),
                           rate_atom::value, now);
    },
    st.members.guard([then](std::vector<bool>&) { then(); }),
    st.members.guard([self](caf::error& err) { fail_run(self, std::move(err)); }));
}

} // namespace troupe::detail
