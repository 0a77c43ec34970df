// A straggler on purpose (--slow-replica=I:F): replica I takes F times its
// compute per step, to try the consistency dial against a slow replica.
#pragma once

#include <cstdint>
#include <string>

#include <caf/expected.hpp>

namespace troupe::detail {

/// Makes replica `index` take `factor` times its compute per step.
struct slow_replica {
  uint32_t index = 0;
  float factor = 1; // 1: no replica is slowed
};

/// Parses "I:F" (replica I, factor F from 1 to 1000); empty is no straggler.
caf::expected<slow_replica> parse_slow_replica(const std::string& text);

} // namespace troupe::detail
