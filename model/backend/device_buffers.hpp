// Float buffers in a backend's memory that messages share as host vectors
// are shared: the memory goes back to its backend when the last holder lets
// go, and the backend lives as long as any of its buffers does (a store
// shard's answer may outlive the shard).
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "model/backend/backend.hpp"

namespace troupe {

/// Allocates `count` floats in `owner`'s memory, released there when the
/// last copy of the pointer is gone.
std::shared_ptr<float> make_device_buffer(const std::shared_ptr<backend>& owner, size_t count);

/// Hands out buffers of one size in one backend's memory, reusing one that
/// only the pool still holds: a step that needs a fresh buffer each time
/// would otherwise allocate on the device each time.
class device_buffer_pool {
public:
  device_buffer_pool(std::shared_ptr<backend> owner, size_t count)
    : owner_(std::move(owner)), count_(count) {}

  /// Returns a buffer nobody else holds.
  std::shared_ptr<float> take();

private:
  std::shared_ptr<backend> owner_;
  size_t count_;
  std::vector<std::shared_ptr<float>> buffers_;
};

} // namespace troupe
