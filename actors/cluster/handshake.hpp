// The connect handshake between a coordinator and a node: protocol version,
// model fingerprint, float format and heartbeat settings must agree, and for
// a run that promises the same bits (sync), everything that decides them.
#pragma once

#include <cstdint>
#include <string>

#include <caf/error.hpp>
#include <caf/fwd.hpp>

#include "messages/protocol.hpp"

namespace troupe {

/// Names the version of Troupe's wire protocol; peers must speak the same.
/// 3: params_msg carries losses as replica_loss values; store_stats says
/// whether the policy reports staleness, and counts unwritten checkpoints.
/// 4: the sharded store: gradient and parameter slices (params_msg.offset),
/// store_config per shard, checkpoint parts, replicas spawned with every shard.
/// 5: replicas take a tick_atom (their push watchdog).
/// 6: the device-aware store: store_config.device, replica_config.store_device,
/// push_msg.device_answer.
/// 7: store_config.abort_on_replica_loss.
constexpr uint32_t troupe_protocol_version = 7;

/// Builds this side's handshake from the actor system's middleman settings.
handshake make_handshake(const caf::actor_system& system, const std::string& model,
                         const std::string& data_dir, const std::string& peer,
                         uint32_t protocol_version = troupe_protocol_version);

/// Checks `theirs` against `mine`; the error names the peer and what differs.
caf::error check_handshake(const handshake& mine, const handshake& theirs);

} // namespace troupe
