// A moving int8 replica's residual, from its old actor to its new one.
#include "actors/run/residual_handover.hpp"

#include <caf/all.hpp>

namespace troupe::detail {

namespace {

// The answer (or its failure) is in: the held order goes out.
void handover_done(coordinator_pointer self, size_t index) {
  auto& handover = self->state.replicas[index].handover;
  handover.awaited = false;
  if (auto order = std::move(handover.order)) {
    handover.order.reset();
    order_replacement(self, index, std::move(*order));
  }
}

} // namespace

void ask_handover(coordinator_pointer self, size_t index, const replica_actor& old) {
  auto& st = self->state;
  st.replicas[index].handover = residual_handover{};
  st.replicas[index].handover.awaited = true;
  self->request(old, step_timeout(st), residual_atom::value)
    .then(st.members.guard([self, index](uint64_t last_push, shared_floats& before,
                                         shared_floats& now) {
            auto& handover = self->state.replicas[index].handover;
            const size_t count = self->state.setup.plan.parameter_count;
            if (before.size() == count && now.size() == count) { // else it starts at zero
              handover.last_push = last_push;
              handover.before = std::move(before);
              handover.now = std::move(now);
            }
            handover_done(self, index);
          }),
          st.members.guard([self, index](caf::error& err) {
            warn(self->state, "replica " + std::to_string(index)
                                + " moves without its int8 residual (it starts at zero): "
                                + describe(err));
            handover_done(self, index);
          }));
}

void order_replacement(coordinator_pointer self, size_t index, epoch_order order) {
  auto& handover = self->state.replicas[index].handover;
  if (handover.awaited) {
    handover.order = std::move(order);
    return;
  }
  order.residual = handover.at(order.params.round);
  handover = residual_handover{};
  order_epoch(self, index, order);
}

} // namespace troupe::detail
