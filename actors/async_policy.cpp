// The asynchronous update policy and the policy factory.
#include "actors/async_policy.hpp"

#include "actors/sync_policy.hpp"

namespace troupe {

void async_policy::on_push(gradient_push push, store_port& store) {
  ++pushes_;
  if (push.batch_size > 0)
    store.apply_step(push.gradient->data());
  // Release the gradient before answering, so the replica can reuse its buffer.
  push.gradient.reset();
  store.answer(push.ticket);
}

expected<std::unique_ptr<update_policy>> make_update_policy(const std::string& mode,
                                                            size_t parameter_count) {
  if (mode == "sync")
    return std::unique_ptr<update_policy>{new sync_policy(parameter_count)};
  if (mode == "async")
    return std::unique_ptr<update_policy>{new async_policy()};
  return fail(model_errc::invalid_argument,
              "unknown mode '" + mode + "' (expected sync or async)");
}

} // namespace troupe
