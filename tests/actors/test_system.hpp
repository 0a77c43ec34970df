// The actor system of tests that run actors step by step: CAF's
// deterministic scheduler with every Troupe message registered, and a
// bitwise comparison of float buffers.
#pragma once

#include <cstring>

#include <caf/all.hpp>

#include "messages/protocol.hpp"
#include "messages/register.hpp"

namespace troupe::testing {

struct test_config : caf::actor_system_config {
  test_config() {
    set("scheduler.policy", caf::atom("testing"));
    register_messages(*this);
  }
};

/// Says whether two buffers hold the same floats bit for bit.
inline bool same_bytes(const shared_floats& a, const shared_floats& b) {
  return a.size() == b.size()
         && (a.size() == 0 || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

} // namespace troupe::testing
