// BASP frames for the wire tests, serialized as CAF 0.17's instance.cpp does.
#include "tests/wire/basp_frames.hpp"

#include <algorithm>

#include <caf/all.hpp>
#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>
#include <caf/io/basp/version.hpp>

namespace troupe::wire_test {

namespace {

// The payload `write` serializes, behind its header.
template <class Write>
bytes frame(caf::actor_system& system, uint8_t operation, uint64_t operation_data,
            uint64_t dest, Write write) {
  bytes payload;
  caf::binary_serializer sink{system, payload};
  if (auto err = write(sink))
    throw std::runtime_error("cannot serialize a BASP payload: " + system.render(err));
  auto out = basp_header_bytes(operation, static_cast<uint32_t>(payload.size()), operation_data,
                               0, dest);
  out.insert(out.end(), payload.begin(), payload.end());
  return out;
}

} // namespace

bytes basp_header_bytes(uint8_t operation, uint32_t payload_len, uint64_t operation_data,
                        uint64_t source_actor, uint64_t dest_actor, uint8_t flags) {
  bytes out(32, 0);
  auto put = [&out](size_t at, uint64_t value, int width) {
    for (int i = 0; i < width; ++i)
      out[at + i] = static_cast<char>(value >> (8 * (width - 1 - i)));
  };
  out[0] = static_cast<char>(operation);
  out[3] = static_cast<char>(flags);
  put(4, payload_len, 4);
  put(8, operation_data, 8);
  put(16, source_actor, 8);
  put(24, dest_actor, 8);
  return out;
}

bytes client_handshake_frame(caf::actor_system& system) {
  return frame(system, 1, 0, 0, [&](caf::serializer& sink) {
    auto node = system.node();
    return sink(node);
  });
}

bytes server_handshake_frame(caf::actor_system& system, uint64_t published,
                             const std::set<std::string>& signatures) {
  return frame(system, 0, caf::io::basp::version, 0, [&](caf::serializer& sink) {
    auto node = system.node();
    auto app_ids = caf::get_or(system.config(), "middleman.app-identifiers",
                               caf::defaults::middleman::app_identifiers);
    caf::actor_id aid = published;
    auto sigs = signatures;
    return sink(node, app_ids, aid, sigs);
  });
}

bytes direct_message_frame(caf::actor_system& system, uint64_t dest, const caf::message& msg,
                           uint64_t message_id) {
  return frame(system, 2, message_id, dest, [&](caf::serializer& sink) {
    std::vector<caf::strong_actor_ptr> stages;
    auto copy = msg;
    return sink(stages, copy);
  });
}

uint64_t published_actor_of(caf::actor_system& system, const bytes& server_handshake) {
  if (server_handshake.size() < 32)
    return 0;
  const bytes payload(server_handshake.begin() + 32, server_handshake.end());
  caf::binary_deserializer source{system, payload};
  caf::node_id node;
  std::vector<std::string> app_ids;
  caf::actor_id aid = 0;
  std::set<std::string> sigs;
  if (source(node, app_ids, aid, sigs))
    return 0;
  return aid;
}

size_t find_bytes(const bytes& haystack, const bytes& pattern) {
  return static_cast<size_t>(
    std::search(haystack.begin(), haystack.end(), pattern.begin(), pattern.end())
    - haystack.begin());
}

} // namespace troupe::wire_test
