// The backend interface's defaults.
#include "model/backend/backend.hpp"

#include <algorithm>
#include <cstdlib>
#include <new>

namespace troupe::detail {

void* backend::allocate_host(size_t bytes) {
  void* ptr = std::aligned_alloc(64, std::max<size_t>(64, (bytes + 63) / 64 * 64));
  if (ptr == nullptr)
    throw std::bad_alloc{};
  return ptr;
}

void backend::release_host(void* ptr) noexcept { std::free(ptr); }

void backend::queue_copy_to_host(void* dst, const void* src, size_t bytes) {
  copy_to_host(dst, src, bytes);
}

} // namespace troupe::detail
