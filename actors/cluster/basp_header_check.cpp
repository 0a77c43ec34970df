// Decoding and checking BASP headers before CAF sees them.
#include "actors/cluster/basp_header_check.hpp"

namespace troupe::detail {

namespace {

uint64_t read_big_endian(const unsigned char* bytes, int count) {
  uint64_t value = 0;
  for (int i = 0; i < count; ++i)
    value = (value << 8) | bytes[i];
  return value;
}

// The field rules of caf::io::basp::valid(header), so that a frame CAF would
// drop is dropped here with a line that says why; and a message id of CAF's
// stream categories, which Troupe never sends, whose empty content CAF
// would read as a stream message and crash on.
std::string refuse_fields(const basp_header& h) {
  const auto op = static_cast<basp_operation>(h.operation);
  switch (op) {
    case basp_operation::server_handshake:
      return h.operation_data == 0 ? "a server handshake without an application version" : "";
    case basp_operation::client_handshake:
      return h.source_actor != 0 || h.dest_actor != 0 ? "a client handshake naming actors" : "";
    case basp_operation::direct_message:
    case basp_operation::routed_message:
      if (h.dest_actor == 0 || h.payload_len == 0)
        return "a " + basp_operation_name(h.operation) + " without receiver or payload";
      return is_stream_message(h.operation_data)
               ? "a " + basp_operation_name(h.operation) + " of a stream category"
               : "";
    case basp_operation::monitor_message:
      return h.payload_len == 0 || h.operation_data != 0 ? "a malformed monitor message" : "";
    case basp_operation::down_message:
      return h.source_actor == 0 || h.dest_actor != 0 || h.payload_len == 0
                 || h.operation_data != 0
               ? "a malformed down message"
               : "";
    case basp_operation::heartbeat:
      return h.source_actor != 0 || h.dest_actor != 0 || h.payload_len != 0
                 || h.operation_data != 0
               ? "a heartbeat with fields set"
               : "";
  }
  return "an unknown BASP " + basp_operation_name(h.operation);
}

bool is_handshake(uint8_t operation) {
  return operation == static_cast<uint8_t>(basp_operation::server_handshake)
         || operation == static_cast<uint8_t>(basp_operation::client_handshake);
}

} // namespace

bool is_stream_message(uint64_t message_id) {
  // caf::message_id: bits 60 and 61 are the category, 2 and 3 the streams'.
  return ((message_id >> 60) & 3) >= 2;
}

std::string basp_operation_name(uint8_t operation) {
  switch (static_cast<basp_operation>(operation)) {
    case basp_operation::server_handshake: return "server_handshake";
    case basp_operation::client_handshake: return "client_handshake";
    case basp_operation::direct_message: return "direct_message";
    case basp_operation::routed_message: return "routed_message";
    case basp_operation::monitor_message: return "monitor_message";
    case basp_operation::down_message: return "down_message";
    case basp_operation::heartbeat: return "heartbeat";
  }
  return "operation " + std::to_string(operation);
}

basp_header read_basp_header(const unsigned char* bytes) {
  basp_header h;
  h.operation = bytes[0];
  h.flags = bytes[3];
  h.payload_len = static_cast<uint32_t>(read_big_endian(bytes + 4, 4));
  h.operation_data = read_big_endian(bytes + 8, 8);
  h.source_actor = read_big_endian(bytes + 16, 8);
  h.dest_actor = read_big_endian(bytes + 24, 8);
  return h;
}

std::string refuse_basp_header(const basp_header& header, connection_end end,
                               bool handshake_done, const frame_bounds& bounds) {
  const uint64_t bound = handshake_done ? bounds.after_handshake : bounds.before_handshake;
  if (header.payload_len > bound)
    return "it announced a frame of " + std::to_string(header.payload_len) + " bytes, over the "
           + std::to_string(bound) + " a frame may hold "
           + (handshake_done ? "(--max-frame-size)" : "before the handshake");
  auto fields = refuse_fields(header);
  if (!fields.empty())
    return "it sent " + fields;
  // CAF 0.17 dereferences the payload of every handshake without checking
  // that there is one.
  if (is_handshake(header.operation) && header.payload_len == 0)
    return "it sent a " + basp_operation_name(header.operation) + " without payload";
  const auto expected = end == connection_end::accepted ? basp_operation::client_handshake
                                                        : basp_operation::server_handshake;
  if (!handshake_done && header.operation != static_cast<uint8_t>(expected))
    return "it sent a " + basp_operation_name(header.operation) + " before its "
           + basp_operation_name(static_cast<uint8_t>(expected));
  // A connection carries one server handshake, from the end that accepted it.
  if (end == connection_end::accepted
      && header.operation == static_cast<uint8_t>(basp_operation::server_handshake))
    return "it sent a server_handshake on a connection it opened";
  if (end == connection_end::connected && handshake_done
      && header.operation == static_cast<uint8_t>(basp_operation::server_handshake))
    return "it sent a second server_handshake";
  if (end == connection_end::connected
      && header.operation == static_cast<uint8_t>(basp_operation::client_handshake))
    return "it sent a client_handshake on a connection this process opened";
  return "";
}

} // namespace troupe::detail
