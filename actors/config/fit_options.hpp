// What a training run is asked to do (fit_options), its checks, and the
// pieces derived from it: the settings fingerprint and the device of each replica.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "actors/replica/backend_wrapper.hpp"
#include "actors/policy/update_policy.hpp"
#include "messages/protocol.hpp"
#include "model/data/dataset.hpp"
#include "model/optim/optimizer.hpp"

namespace troupe {

/// Says what a run does when it loses a replica (--on-replica-loss).
enum class replica_loss_action {
  abort,        // end the run with the error
  continue_run, // the survivors finish the epoch (sync: they re-plan it)
};

/// Names the devices replicas take round-robin (--devices, parsed).
struct device_choice {
  bool automatic = false;        // "auto": every CUDA device that opens, else the cpu
  std::vector<std::string> pool; // otherwise: "cpu" or "cuda:N", in order
};

/// Describes a whole training run.
struct fit_options {
  std::string mode = "sync";            // one of update_policy_modes()
  uint32_t staleness = 0;               // ssp: pushes a replica may run ahead of the slowest
  uint32_t backup_replicas = 0;         // sync: rounds close without the last this many
  std::string slow_replica;             // "I:F": replica I takes F times its compute
  std::string staleness_lr = "none";    // none | inverse (async, ssp)
  std::string trace_path;               // --trace: write a Chrome trace of the run here
  uint32_t replicas = 2;
  uint32_t epochs = 5;
  uint32_t batch_size = 32;             // global: samples per round over all replicas
  std::string model = "784-128relu-10";
  optimizer_config optimizer;
  uint64_t seed = 42;
  std::string devices = "cpu";          // cpu | cuda:0,cuda:1,... | auto (round-robin)
  std::string on_replica_loss = "abort"; // abort | continue
  uint32_t step_timeout_ms = 60000;     // bound on one push's answer
  std::vector<std::string> nodes;       // HOST:PORT of node programs; empty: all local
  uint32_t replicas_per_node = 1;       // with nodes: replicas = nodes * replicas_per_node
  std::string data_dir;                 // where nodes read the data (their own disk)
  bool tls = false;                     // connect to nodes over mutual TLS
  std::string checkpoint_path;          // write checkpoints here ...
  uint32_t checkpoint_every = 0;        // ... every N sync rounds, and after each epoch
  std::string resume_path;              // continue the run saved in this checkpoint
  uint32_t protocol_version = 0;        // to announce to nodes; 0: this build's
  bool pin_cores = false;               // pin replica i to core i % cores
  uint32_t store_shards = 0;            // store shard actors; 0: default_store_shards()
  std::vector<std::string> store_nodes; // HOST:PORT of nodes for the shards; empty: here
  std::string store_node;               // one store node (--store-node, before --store-nodes)
  std::string store_device = "cpu";     // where shards keep and step parameters: cpu | cuda:N
  // Test hook, never sent: wraps each local replica's backend (fault injection).
  backend_wrapper wrap_replica_backend;
  // Parsed from the texts above by check_fit_options; the run reads only these.
  replica_loss_action loss_action = replica_loss_action::abort;
  device_choice device_plan;
  uint32_t slow_index = 0;  // from slow_replica
  float slow_factor = 1;    // 1: no replica is slowed
};

/// Returns the knobs of the run's update policy (--staleness, --backup-replicas).
policy_settings policy_settings_for(const fit_options& options);

/// Parses a --slow-replica value "I:F" (replica I, factor F >= 1).
caf::expected<std::pair<uint32_t, float>> parse_slow_replica(const std::string& text);

/// Hashes the settings a resumed run must share with the run that wrote the
/// checkpoint (mode, replicas, batch, seed, model, optimizer); epochs may differ.
uint64_t run_fingerprint(const fit_options& options);

/// Returns the job description replica `index` of a run gets (on `device`):
/// the one place where options become a replica's wire config.
replica_config replica_config_for(const fit_options& options, uint32_t index,
                                  const std::string& device);

/// Parses an --on-replica-loss value: abort or continue.
caf::expected<replica_loss_action> parse_replica_loss(const std::string& text);

/// Parses a --devices value: "cpu", a list such as "cuda:0,cuda:1", or "auto".
caf::expected<device_choice> parse_devices(const std::string& text);

/// Returns the device of each replica: the pool round-robin; "auto" opens
/// devices to see which exist.
std::vector<std::string> assign_devices(const device_choice& choice, uint32_t replicas);

/// Checks options against the data and fills in what follows from them (with
/// nodes, replicas = nodes x replicas_per_node; the parsed loss action and
/// devices; store_node moved into store_nodes; the number of store shards);
/// every problem is a clear error.
caf::expected<fit_options> check_fit_options(fit_options options, const dataset_pair* data);

} // namespace troupe
