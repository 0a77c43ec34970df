// A hook around the backend a local replica computes with: tests wrap it to
// inject faults. It lives in the spawning process only and is never sent.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

namespace troupe::detail {

class backend;

/// Returns the backend replica `replica` computes with, given the one made for
/// its device (the wrapper may return it unchanged). Empty: no wrapping.
using backend_wrapper =
  std::function<std::unique_ptr<backend>(uint32_t replica, std::unique_ptr<backend>)>;

} // namespace troupe::detail
