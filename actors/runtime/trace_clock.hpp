// The steady clock that trace spans and handshakes carry: nanoseconds since
// its epoch, and the span of one piece of work (actors/report/trace_file.hpp).
#pragma once

#include <chrono>
#include <cstdint>

#include "messages/protocol.hpp"

namespace troupe::detail {

/// Returns a steady-clock time as the nanoseconds trace spans and handshakes
/// carry (now, by default).
inline int64_t steady_nanoseconds(
  std::chrono::steady_clock::time_point at = std::chrono::steady_clock::now()) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(at.time_since_epoch()).count();
}

/// Records `kind` of `round` from `from` to `to`.
inline trace_span make_trace_span(trace_kind kind, uint64_t round,
                                  std::chrono::steady_clock::time_point from,
                                  std::chrono::steady_clock::time_point to) {
  return trace_span{static_cast<uint8_t>(kind), round, steady_nanoseconds(from),
                    steady_nanoseconds(to) - steady_nanoseconds(from)};
}

} // namespace troupe::detail
