// Marks what libtroupe exports. The library is built with hidden visibility
// (CMake's visibility preset), so only the public API declared with
// TROUPE_API is visible to programs: no CAF, Eigen or fmt symbol, and none
// of Troupe's internals.
#pragma once

#if defined(__GNUC__) || defined(__clang__)
#  define TROUPE_API __attribute__((visibility("default")))
#else
#  define TROUPE_API
#endif
