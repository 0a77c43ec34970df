// The asynchronous update policy.
#include "actors/policy/async_policy.hpp"

namespace troupe::detail {

policy_descriptor async_policy_descriptor() {
  policy_descriptor d;
  d.name = "async";
  d.summary = "each gradient applied on arrival, its replica answered at once";
  d.settings = {"staleness-lr"};
  d.traits = [](const policy_settings&) {
    policy_traits t;
    t.reports_staleness = true;
    t.respawns = true;
    t.resumes_pushes = true;
    return t;
  };
  d.make = [](const policy_settings& s) -> std::unique_ptr<update_policy> {
    return std::make_unique<async_policy>(s);
  };
  return d;
}

std::optional<push_refusal> async_policy::on_push(gradient_push push, store_port& store) {
  ++pushes_;
  if (push.batch_size > 0)
    store.apply_step(push.gradient.data(), staleness_lr_scale(settings_, push.staleness));
  // Release the gradient before answering, so the replica can reuse its buffer.
  push.gradient = shared_floats{};
  store.answer(push.ticket);
  return std::nullopt;
}

} // namespace troupe::detail
