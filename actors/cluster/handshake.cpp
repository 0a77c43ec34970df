// Building and checking handshakes.
#include "actors/cluster/handshake.hpp"

#include <chrono>
#include <cstring>
#include <vector>

#include <caf/all.hpp>

#include "actors/runtime/trace_clock.hpp"
#include "messages/errors.hpp"
#include "model/model_description.hpp"
#include "model/numerics_identity.hpp"

namespace troupe::detail {

namespace {

// Values whose raw bytes differ under another byte order or float format.
const std::vector<float>& probe_values() {
  static const std::vector<float> values{1.0f, -2.5f, 3.14159274f, 1.0e-30f, 65504.0f};
  return values;
}

uint64_t milliseconds(const caf::actor_system& system, const char* key,
                      caf::timespan fallback) {
  auto value = caf::get_or(system.config(), key, fallback);
  return static_cast<uint64_t>(
    std::chrono::duration_cast<std::chrono::milliseconds>(value).count());
}

} // namespace

handshake make_handshake(const caf::actor_system& system, const std::string& model,
                         const std::string& data_dir, const std::string& peer,
                         uint32_t protocol_version) {
  handshake hello;
  hello.protocol_version = protocol_version;
  hello.model = model;
  if (auto described = model_description::resolve(model))
    hello.model_fingerprint = described->fingerprint();
  hello.float_probe = shared_floats{std::make_shared<const std::vector<float>>(probe_values())};
  hello.heartbeat_interval_ms = milliseconds(system, "middleman.heartbeat-interval",
                                             caf::defaults::middleman::heartbeat_interval);
  hello.connection_timeout_ms = milliseconds(system, "middleman.connection-timeout",
                                             caf::defaults::middleman::connection_timeout);
  hello.data_dir = data_dir;
  hello.peer = peer;
  const auto numerics = current_numerics();
  hello.numerics_build = numerics.build;
  hello.numerics_libm = numerics.libm;
  hello.gemm_kernel = numerics.gemm_kernel;
  hello.gemm_family = numerics.gemm_family;
  hello.clock_ns = steady_nanoseconds();
  return hello;
}

caf::error check_handshake(const handshake& mine, const handshake& theirs) {
  auto refuse = [&](const std::string& why) {
    return make_troupe_error(troupe_errc::bad_config,
                             theirs.peer + " refused by " + mine.peer + ": " + why);
  };
  if (theirs.protocol_version != mine.protocol_version)
    return refuse("protocol version " + std::to_string(theirs.protocol_version) + ", expected "
                  + std::to_string(mine.protocol_version));
  const auto& probe = probe_values();
  if (theirs.float_probe.size() != probe.size()
      || std::memcmp(theirs.float_probe.data(), probe.data(), probe.size() * sizeof(float)) != 0)
    return refuse("its floats arrive garbled: byte order or float format differs "
                  "(Troupe sends raw IEEE-754 little-endian buffers)");
  if (theirs.heartbeat_interval_ms != mine.heartbeat_interval_ms
      || theirs.connection_timeout_ms != mine.connection_timeout_ms)
    return refuse("heartbeat " + std::to_string(theirs.heartbeat_interval_ms) + " ms / timeout "
                  + std::to_string(theirs.connection_timeout_ms) + " ms, expected "
                  + std::to_string(mine.heartbeat_interval_ms) + " ms / "
                  + std::to_string(mine.connection_timeout_ms)
                  + " ms (middleman.heartbeat-interval and middleman.connection-timeout "
                    "must be the same on every node)");
  if (!mine.model.empty() && !theirs.model.empty()) {
    if (theirs.model != mine.model)
      return refuse("model " + theirs.model + ", expected " + mine.model);
    if (theirs.model_fingerprint != mine.model_fingerprint)
      return refuse("model fingerprint of " + theirs.model + " differs");
  }
  if (mine.same_bits_required || theirs.same_bits_required) {
    auto identity = [](const handshake& x) {
      return numerics_identity{x.numerics_build, x.numerics_libm, x.gemm_kernel, x.gemm_family};
    };
    auto difference = numerics_difference(identity(mine), identity(theirs));
    if (!difference.empty())
      return refuse("it computes other bits, and a sync run promises the same bits on every "
                    "replica: " + difference + " (" + theirs.peer + " vs " + mine.peer
                    + "). Start every process with the same --gemm-kernel family (fused: "
                      "avx512, avx2, fma128; unfused: portable) and the same build, or run "
                      "--mode=async");
  }
  return caf::none;
}

} // namespace troupe::detail
