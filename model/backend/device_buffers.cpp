// Shared buffers in a backend's memory.
#include "model/backend/device_buffers.hpp"

namespace troupe::detail {

std::shared_ptr<float> make_device_buffer(const std::shared_ptr<backend>& owner, size_t count) {
  auto* data = static_cast<float*>(owner->allocate(count * sizeof(float)));
  return std::shared_ptr<float>(data, [owner](float* ptr) { owner->release(ptr); });
}

std::shared_ptr<float> make_host_buffer(const std::shared_ptr<backend>& owner, size_t count) {
  auto* data = static_cast<float*>(owner->allocate_host(count * sizeof(float)));
  return std::shared_ptr<float>(data, [owner](float* ptr) { owner->release_host(ptr); });
}

std::shared_ptr<float> device_buffer_pool::take() {
  for (const auto& buffer : buffers_)
    if (buffer.use_count() == 1)
      return buffer;
  buffers_.push_back(where_ == buffer_memory::device ? make_device_buffer(owner_, count_)
                                                      : make_host_buffer(owner_, count_));
  return buffers_.back();
}

} // namespace troupe::detail
