// What every backend shares: recording by keeping the ops' function and
// calling it again, for backends (the CPU) where a launch costs nothing.
#include "model/backend/backend.hpp"

#include <utility>

namespace troupe {

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

expected<std::unique_ptr<recorded_ops>> backend::record(std::function<void()> queue_ops) {
  return std::unique_ptr<recorded_ops>(new replayed_function(std::move(queue_ops)));
}

} // namespace troupe
