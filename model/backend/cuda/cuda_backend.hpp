// The CUDA backend's one public entry point. No CUDA header is reached from
// here: callers see only the backend interface.
#pragma once

#include <memory>

#include "model/backend/backend.hpp"
#include "common/expected.hpp"

namespace troupe::detail {

/// Creates a backend on CUDA device `device_index` with its own stream and
/// cuBLAS handle. No usable driver or device, or an index out of range, is a
/// errc::device whose message says why.
expected<std::unique_ptr<backend>> make_cuda_backend(int device_index);

} // namespace troupe::detail
