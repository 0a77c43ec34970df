// The one assert macro for broken invariants (not for bad input, which gets an
// error value): it prints file:line and the condition, and aborts, in every
// build type.
#pragma once

#include <cstdio>
#include <cstdlib>

#define TROUPE_ASSERT(condition)                                                   \
  do {                                                                             \
    if (!(condition)) {                                                            \
      std::fprintf(stderr, "%s:%d: broken invariant: %s\n", __FILE__, __LINE__,    \
                   #condition);                                                    \
      std::abort();                                                                \
    }                                                                              \
  } while (false)
