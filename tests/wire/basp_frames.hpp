// BASP frames as CAF 0.17 writes them, built in the test process with CAF's
// own serializer, to send by hand over a raw socket: the handshakes and a
// direct message, or just a header with any field set.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include <caf/fwd.hpp>

namespace troupe::wire_test {

using bytes = std::vector<char>;

/// Returns a BASP header's 32 bytes, big-endian (caf/io/basp/header.hpp).
bytes basp_header_bytes(uint8_t operation, uint32_t payload_len, uint64_t operation_data,
                        uint64_t source_actor, uint64_t dest_actor, uint8_t flags = 0);

/// Returns a client handshake naming `system`'s node.
bytes client_handshake_frame(caf::actor_system& system);

/// Returns a server handshake naming `system`'s node, with the actor id
/// `published` and its interface `signatures` as the published actor.
bytes server_handshake_frame(caf::actor_system& system, uint64_t published,
                             const std::set<std::string>& signatures);

/// Returns a direct message from nobody to actor `dest` holding `msg`.
bytes direct_message_frame(caf::actor_system& system, uint64_t dest, const caf::message& msg,
                           uint64_t message_id = 0);

/// Returns the id of the actor a server handshake (its whole frame, as a
/// node sends it first thing) announces as published; 0 if unreadable.
uint64_t published_actor_of(caf::actor_system& system, const bytes& server_handshake);

/// Returns where `pattern` starts in `haystack` (haystack.size() if nowhere).
size_t find_bytes(const bytes& haystack, const bytes& pattern);

} // namespace troupe::wire_test
