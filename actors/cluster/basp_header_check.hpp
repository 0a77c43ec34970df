// What a guarded connection checks in each BASP header before CAF 0.17 reads
// it: CAF sizes buffers from headers nobody has authenticated, and crashes on
// a handshake without payload (docs/protocol.md, "What a plaintext port
// accepts").
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace troupe::detail {

/// The bytes of one BASP header on the wire (caf/io/basp/header.hpp).
constexpr size_t basp_header_size = 32;

/// The operations of BASP 0.17 (caf/io/basp/message_type.hpp).
enum class basp_operation : uint8_t {
  server_handshake = 0,
  client_handshake = 1,
  direct_message = 2,
  routed_message = 3,
  monitor_message = 4,
  down_message = 5,
  heartbeat = 6,
};

/// Says whether a message id (BASP's operation_data of a message) is of
/// one of CAF's stream categories, which Troupe never sends.
bool is_stream_message(uint64_t message_id);

/// Names an operation byte, e.g. "client_handshake" or "operation 9".
std::string basp_operation_name(uint8_t operation);

/// One header, decoded from its big-endian bytes.
struct basp_header {
  uint8_t operation = 0;
  uint8_t flags = 0;
  uint32_t payload_len = 0;
  uint64_t operation_data = 0;
  uint64_t source_actor = 0;
  uint64_t dest_actor = 0;
};

/// Decodes the first basp_header_size bytes at `bytes`.
basp_header read_basp_header(const unsigned char* bytes);

/// Which end of the TCP connection this process is: the one that accepted it
/// (the peer must open with a client handshake) or the one that connected
/// (the peer must open with a server handshake).
enum class connection_end { accepted, connected };

/// The largest payload a frame may announce before its connection's
/// handshake and after it.
struct frame_bounds {
  uint64_t before_handshake = uint64_t{64} << 10;
  uint64_t after_handshake = uint64_t{64} << 20;
};

/// Returns why `header` must not reach CAF on a connection at `end` whose
/// peer has (or has not yet) completed its handshake, or "" if it may: an
/// unknown operation, fields CAF would refuse, a handshake without payload,
/// anything but the expected handshake first, a payload over the bound.
std::string refuse_basp_header(const basp_header& header, connection_end end,
                               bool handshake_done, const frame_bounds& bounds);

} // namespace troupe::detail
