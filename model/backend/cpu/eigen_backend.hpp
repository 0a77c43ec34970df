// The CPU backend: our GEMM kernels, Eigen and plain loops over host memory. It is the
// reference every other backend is checked against.
#pragma once

#include <memory>

#include "model/backend/backend.hpp"

namespace troupe::detail {

/// Creates the CPU (Eigen) backend; it computes on the calling thread.
std::unique_ptr<backend> make_eigen_backend();

} // namespace troupe::detail
