// Test-only fault injection: a backend that computes like a real one and
// throws at its N-th gradient, and the run_config hook that installs it
// around one replica's backend (local replicas only; nothing of it is sent).
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

#include "actors/config/run_config.hpp"
#include "model/backend/backend.hpp"
#include "tests/actors/forwarding_backend.hpp"

namespace troupe::testing {

/// Computes like `inner` and throws at gradient `fail_at` (1-based), so the
/// replica that owns it dies at that push, before sending it.
class failing_backend final : public forwarding_backend {
public:
  failing_backend(std::unique_ptr<backend> inner, uint64_t fail_at)
    : forwarding_backend(std::move(inner)), fail_at_(fail_at) {}

  // Called once per gradient (with dlogits) and per evaluated batch (without).
  void softmax_cross_entropy(const float* logits, const int32_t* labels, int rows,
                             int classes, float scale, float* dlogits,
                             float* stats) override {
    if (dlogits != nullptr && ++gradients_ == fail_at_)
      throw std::runtime_error("injected fault at push " + std::to_string(gradients_));
    forwarding_backend::softmax_cross_entropy(logits, labels, rows, classes, scale, dlogits,
                                              stats);
  }

private:
  uint64_t fail_at_;
  uint64_t gradients_ = 0;
};

/// Makes replica `replica` of a fit die at its push `push` (1-based): it
/// throws while computing that gradient, as a crashing replica would.
inline void fail_replica_at_push(run_config& options, uint32_t replica, uint64_t push) {
  options.wrap_replica_backend = [replica, push](uint32_t index,
                                                 std::unique_ptr<backend> compute) {
    if (index != replica)
      return compute;
    return std::unique_ptr<backend>(new failing_backend(std::move(compute), push));
  };
}

} // namespace troupe::testing
