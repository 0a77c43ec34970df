// The connect handshake between a coordinator and a node: protocol version,
// model fingerprint, float format and heartbeat settings must agree, and for
// a run that promises the same bits (sync), everything that decides them.
#pragma once

#include <cstdint>
#include <string>

#include <caf/error.hpp>
#include <caf/fwd.hpp>

#include "messages/protocol.hpp"

namespace troupe::detail {

/// Names the version of Troupe's wire protocol; peers must speak the same.
/// It changes whenever a message's encoding or meaning does.
constexpr uint32_t troupe_protocol_version = 24;

/// Builds this side's handshake from the actor system's middleman settings.
handshake make_handshake(const caf::actor_system& system, const std::string& model,
                         const std::string& data_dir, const std::string& peer,
                         uint32_t protocol_version = troupe_protocol_version);

/// Checks `theirs` against `mine`; the error names the peer and what differs.
caf::error check_handshake(const handshake& mine, const handshake& theirs);

} // namespace troupe::detail
