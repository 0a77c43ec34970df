// Float buffers in a backend's memory that messages share as host vectors
// are shared: the memory goes back to its backend when the last holder lets
// go, and the backend lives as long as any of its buffers does (a store
// shard's answer may outlive the shard).
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "model/backend/backend.hpp"

namespace troupe::detail {

/// Allocates `count` floats in `owner`'s memory, released there when the
/// last copy of the pointer is gone.
std::shared_ptr<float> make_device_buffer(const std::shared_ptr<backend>& owner, size_t count);

/// Allocates `count` floats of host memory that `owner` copies fastest
/// (backend::allocate_host), released when the last copy of the pointer is gone.
std::shared_ptr<float> make_host_buffer(const std::shared_ptr<backend>& owner, size_t count);

/// Says where a device_buffer_pool's buffers are.
enum class buffer_memory {
  device, // the backend's own memory
  host,   // host memory the backend copies fastest
};

/// Hands out buffers of one size in one backend's memory, or host memory for
/// it, reusing one that only the pool still holds: a step that needs a fresh
/// buffer each time would otherwise allocate each time (on a device, or
/// page faults on every first touch of host memory).
class device_buffer_pool {
public:
  device_buffer_pool(std::shared_ptr<backend> owner, size_t count,
                     buffer_memory where = buffer_memory::device)
    : owner_(std::move(owner)), count_(count), where_(where) {}

  /// Returns a buffer nobody else holds.
  std::shared_ptr<float> take();

private:
  std::shared_ptr<backend> owner_;
  size_t count_;
  buffer_memory where_;
  std::vector<std::shared_ptr<float>> buffers_;
};

} // namespace troupe::detail
