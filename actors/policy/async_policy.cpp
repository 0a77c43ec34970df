// The asynchronous update policy.
#include "actors/policy/async_policy.hpp"

namespace troupe {

std::optional<push_refusal> async_policy::on_push(gradient_push push, store_port& store) {
  ++pushes_;
  if (push.batch_size > 0)
    store.apply_step(push.gradient.data(), staleness_lr_scale(settings_, push.staleness));
  // Release the gradient before answering, so the replica can reuse its buffer.
  push.gradient = shared_floats{};
  store.answer(push.ticket);
  return std::nullopt;
}

} // namespace troupe
