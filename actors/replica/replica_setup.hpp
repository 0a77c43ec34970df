// What a replica owns, and how it is built from its configuration: the
// model on its backend, its store's shards, its data and class weights.
#pragma once

#include <memory>
#include <vector>

#include <caf/expected.hpp>
#include <caf/fwd.hpp>

#include <troupe/data_source.hpp>
#include <troupe/model.hpp>

#include "actors/config/backend_wrapper.hpp"
#include "actors/replica/store_group.hpp"
#include "messages/interfaces.hpp"
#include "model/device_capability.hpp"

namespace troupe::detail {

/// Holds what a replica owns, built before it is spawned.
struct replica_setup {
  replica_config config;
  store_group store; // every shard, in shard order
  std::shared_ptr<const data_source> train;
  std::shared_ptr<backend> compute; // shared with its device buffers, which a store may hold
  // The model: the built-in network on `compute`, or any other model, which
  // computes on the host. `device` is its device capability, null where it
  // has none (it then computes through troupe::model alone).
  std::unique_ptr<troupe::model> model;
  device_capability* device = nullptr;
  int inputs = 0;
  size_t max_batch = 0; // samples the batch buffers hold
  // Gradients and parameters change hands in device memory: the replica
  // computes on the device its store's shards step on, in their process
  // (see hands_over_on_device).
  bool device_handover = false;
};

/// Builds a replica's setup: resolves its model, loads the training set
/// from config.data_dir when `train` is null (as a remote node does), opens
/// its device (wrapped by `wrap` if set) and checks that they fit; bad data,
/// model, device or class weights are errors (bad_data, bad_config,
/// device_failure). `here` is this process's node.
caf::expected<std::shared_ptr<replica_setup>>
make_replica_setup(replica_config config, std::vector<store_actor> shards,
                   std::shared_ptr<const data_source> train, const backend_wrapper& wrap,
                   const caf::node_id& here);

} // namespace troupe::detail
