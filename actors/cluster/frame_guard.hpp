// A bound on the size of one incoming BASP frame: a plaintext listening port
// whose connections close, instead of allocating, when a peer announces more.
#pragma once

#include <cstdint>
#include <set>
#include <string>

#include <caf/fwd.hpp>

namespace troupe {

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

/// Publishes `whom` (with its interface `sigs`) on `addr`:`port` through CAF's
/// BASP broker, as middleman::publish does, except that every connection
/// accepted there refuses a frame announcing more than `max_frame_size`
/// payload bytes: it logs one line naming the peer and the size, and closes
/// the connection before CAF allocates a receive buffer for it. Returns the
/// port bound (the real one when `port` is 0).
caf::expected<uint16_t> publish_guarded(caf::actor_system& system,
                                        const caf::strong_actor_ptr& whom,
                                        std::set<std::string> sigs, uint16_t port,
                                        const std::string& addr, bool reuse_addr,
                                        uint64_t max_frame_size);

} // namespace troupe
