// Tests and benchmarks name Troupe's internals (troupe::detail) as troupe::X,
// beside the public API: CMake includes this ahead of each of their sources
// (troupe_reach_internals). The library itself never includes it.
#pragma once

namespace troupe::detail {}

namespace troupe {
using namespace detail;
}
