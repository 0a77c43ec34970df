// A store shard on a device never applies a gradient with NaN or Inf, and
// never reads one on the host: replicas on its device flag their gradients
// there (device_floats::non_finite), the step skips itself on the device if
// a flag is set, and the shard reads that verdict one step later, when the
// next round's first push, a checkpoint or the final parameters wait for it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <caf/error.hpp>

#include "messages/device_floats.hpp"
#include "model/backend/backend.hpp"
#include "model/optim/optimizer.hpp"

namespace troupe::detail {

/// Holds the flags of the gradients a shard's next step reads, and the
/// verdict of its last step.
class device_verdicts {
public:
  device_verdicts(std::shared_ptr<backend> device, uint32_t shard)
    : device_(std::move(device)), shard_(shard) {}

  /// Notes a gradient on this device whose replica checked it there: the
  /// step that reads it checks its flag.
  void note_checked(const device_floats& gradient, uint32_t replica, uint64_t round);

  /// Runs `step` (an optimizer step over `terms` with `optim`), made to
  /// skip itself on the device if any of the terms' flags is set: one flag
  /// as it is, several as their sum. The verdict is read by check().
  template <class Step>
  void guarded(const std::vector<weighted_gradient>& terms, optimizer& optim, Step step) {
    auto verdict = guard(terms, optim);
    step();
    queue(std::move(verdict));
  }

  /// Reads the last step's verdict, waiting for that step if need be: an
  /// error naming the replica and round of a gradient the device found NaN
  /// or Inf in (the step left the parameters as they were). Once refused,
  /// always refused: the run ends.
  caf::error check();

private:
  struct checked_gradient {
    uint32_t replica = 0;
    uint64_t round = 0;
    std::weak_ptr<const float> flag; // the policy holds the gradient, and so the flag
  };
  struct step_verdict {
    std::shared_ptr<const device_event> done;
    std::shared_ptr<float> skipped; // page-locked: non-zero if the step skipped itself
    std::vector<std::pair<checked_gradient, std::shared_ptr<const float>>> flags;
  };

  std::optional<step_verdict> guard(const std::vector<weighted_gradient>& terms,
                                    optimizer& optim);
  void queue(std::optional<step_verdict> verdict);

  std::shared_ptr<backend> device_; // null: a shard on the host, which checks on the host
  uint32_t shard_;
  std::unordered_map<const float*, checked_gradient> checked_; // by where they start
  std::optional<step_verdict> unchecked_;
  std::shared_ptr<float> any_flagged_;  // device: the sum of a step's flags
  std::shared_ptr<float> verdict_slot_; // page-locked: one verdict is read before the next
  caf::error refused_;
};

} // namespace troupe::detail
