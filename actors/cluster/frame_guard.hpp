// Plaintext connections guarded against what a peer may send: a bound on the
// size of one incoming BASP frame, header checks, and stall bounds, for the
// ports a process publishes and the connections it opens.
#pragma once

#include <cstdint>
#include <set>
#include <string>

#include <caf/fwd.hpp>
#include <caf/io/middleman_actor.hpp>

namespace troupe::detail {

/// The largest payload one BASP frame may announce, by default: 64 MiB, far
/// above Troupe's largest message (a gradient or parameter block: 4 bytes per
/// parameter, ~407 KB for 784-128relu-10) and far below what hurts a node.
constexpr uint64_t default_max_frame_size = uint64_t{64} << 20;

/// The bounds check_max_frame_size accepts: BASP's own handshakes need a few
/// KiB, and its payload_len field is 32 bits.
constexpr uint64_t min_max_frame_size = uint64_t{64} << 10;
constexpr uint64_t max_max_frame_size = 0xFFFFFFFFull;

/// Room beside a message's floats for its other fields and BASP's header.
constexpr uint64_t frame_header_room = 4096;

/// Checks a --max-frame-size value (bytes); a bad_config error names the
/// option and the accepted range.
caf::error check_max_frame_size(uint64_t bytes);

/// Returns the middleman actor of `system` whose connections are guarded
/// (guarded_scribe.hpp): use it wherever CAF's own middleman().actor_handle()
/// would connect or publish in plaintext. The first call spawns it with
/// `max_frame_size` as the bound of a frame after the handshake and of the
/// payload bytes announced and not yet received over all its connections;
/// later calls return the same actor. It ends with the system's middleman.
caf::io::middleman_actor guarded_middleman(caf::actor_system& system,
                                           uint64_t max_frame_size = default_max_frame_size);

/// Publishes `whom` (with its interface `sigs`) on `addr`:`port` through the
/// guarded middleman, as middleman::publish does: a peer that sends what CAF
/// 0.17 cannot take safely, announces more than `max_frame_size` payload
/// bytes, or stalls is closed with one line on stderr naming it and why.
/// Returns the port bound (the real one when `port` is 0).
caf::expected<uint16_t> publish_guarded(caf::actor_system& system,
                                        const caf::strong_actor_ptr& whom,
                                        std::set<std::string> sigs, uint16_t port,
                                        const std::string& addr, bool reuse_addr,
                                        uint64_t max_frame_size);

} // namespace troupe::detail
