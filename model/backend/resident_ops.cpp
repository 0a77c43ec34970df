// The default recording: keep the ops' function and call it again, for
// backends (the CPU) where a launch costs nothing.
#include "model/backend/resident_ops.hpp"

#include <utility>

namespace troupe::detail {

namespace {

class replayed_function final : public recorded_ops {
public:
  explicit replayed_function(std::function<void()> queue_ops)
    : queue_ops_(std::move(queue_ops)) {}
  void replay() override { queue_ops_(); }

private:
  std::function<void()> queue_ops_;
};

} // namespace

expected<std::unique_ptr<recorded_ops>>
resident_loop_ops::record(std::function<void()> queue_ops) {
  return std::unique_ptr<recorded_ops>(new replayed_function(std::move(queue_ops)));
}

} // namespace troupe::detail
