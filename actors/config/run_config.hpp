// What a training run is asked to do: one typed value. A program fills it in
// (from the command line: run_options.hpp), check_run_config checks it once,
// and actors/run/run_plan.hpp derives what each store shard, replica and the
// checkpoint writer get from it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <caf/expected.hpp>

#include "actors/config/host_port.hpp"
#include "actors/config/backend_wrapper.hpp"
#include "actors/config/slow_replica.hpp"
#include "common/optimizer_config.hpp"
#include "common/settings_fields.hpp"
#include "messages/policy_spec.hpp"
#include "messages/protocol.hpp"
#include "model/data/dataset.hpp"

namespace troupe::detail {

/// Names the devices replicas take round-robin (--devices).
struct device_plan {
  bool automatic = false;               // every CUDA device that opens, else the cpu
  std::vector<std::string> pool{"cpu"}; // otherwise: "cpu" or "cuda:N", in order
};

/// Describes a whole training run.
struct run_config {
  // Training: the model, its data and how it is optimized.
  std::string model = "784-128relu-10";
  std::string data_dir;   // IDX files; nodes read them from their own disk
  uint32_t epochs = 5;
  uint32_t batch_size = 32; // global: samples per round over all replicas
  optimizer_config optimizer;
  uint64_t seed = 42;
  // The last fraction of the training data validates instead of the test
  // set (Keras's validation_split); 0: none.
  double validation_split = 0;
  // Metrics scored on the validation data after each epoch besides loss and
  // accuracy, by name (model/metrics.hpp): "top_5_accuracy,mae".
  std::string extra_metrics;
  // Keras's class_weight: a weight per class that scales each training
  // sample's loss; the classes past its end weigh 1 (check_run_config pads
  // it to the data's classes). Empty: every sample weighs 1.
  std::vector<float> class_weights;
  // Consistency: the store's update policy and its settings.
  policy_spec policy;
  // Replicas, and where they run. 0 replicas: one per usable core here, or
  // nodes x replicas_per_node with nodes (check_run_config fills it in).
  uint32_t replicas = 0;
  device_plan devices;
  std::vector<host_port> nodes; // empty: every replica in this process
  uint32_t replicas_per_node = 1;
  slow_replica slow;
  bool pin_cores = false; // pin replica i and store shard i to core i % cores
  // The store: its shards, where they run and step.
  uint32_t store_shards = 0; // 0: default_store_shards() (check_run_config fills it in)
  std::vector<host_port> store_nodes; // shard k on node k mod n; empty: here
  bool store_here = false; // --store-nodes=here: this process even with --nodes
  std::string store_device = "cpu";   // cpu | cuda:N
  // What gradients and parameters are rounded to on their way between
  // replicas and shards (--wire): part of the run's math, here and on nodes.
  float_codec wire = float_codec::fp32;
  // Answers to replicas in other processes travel whole, never coded
  // against the version the replica holds (messages/answer_delta.hpp).
  bool whole_answers = false;
  // Pushes to shards in other processes carry their zeros, never a mask of
  // them (messages/zero_mask.hpp).
  bool whole_pushes = false;
  // Replicas send a shard in another process its slice as soon as the
  // model has written it, not once the backward pass is done.
  bool pushes_ahead = false;
  // Failures.
  replica_loss_action on_replica_loss = replica_loss_action::abort;
  bool respawn_anywhere = false; // respawn in this process once no node can host
  uint32_t respawn_timeout_ms = 0; // with no place for a respawn, wait this long for a join
  uint32_t max_replicas_per_node = 0; // bound on a node's replicas after respawns and joins; 0: none
  std::optional<host_port> accept_joins; // where nodes join the run (--accept-joins)
  uint32_t step_timeout_ms = 60000; // bound on one push's answer
  // A store that heals (heals_store) is kept in this process at the run's
  // start, each epoch's end and every snapshot_every sync rounds.
  uint32_t snapshot_every = 0; // 0 with heals_store: default_snapshot_every
  // Checkpoints, on this process's disk.
  std::string checkpoint_path;
  uint32_t checkpoint_every = 0; // also every N sync rounds; 0: after each epoch only
  std::string resume_path;
  // Fine-tuning: the parameters the run starts from instead of the model's
  // initialization (a saved or trained model's), with a fresh optimizer.
  shared_floats start_parameters;
  // What the run records and how it talks to nodes.
  std::string trace_path;        // a Chrome trace of the run
  bool tls = false;              // connect to nodes over mutual TLS
  uint32_t protocol_version = 0; // to announce to nodes; 0: this build's
  // Test hook, never sent: wraps each local replica's backend (fault injection).
  backend_wrapper wrap_replica_backend;
};

/// The rounds between a healing store's snapshots unless --snapshot-every says.
constexpr uint32_t default_snapshot_every = 100;

/// Says whether a shard's death is survived: a store on nodes, or any store
/// of a --wire=int8 run with nodes (whose lost replicas roll back too), under
/// --on-replica-loss=respawn rolls back to its last snapshot instead.
bool heals_store(const run_config& config);

/// Lists the settings a resumed run must share with the run that wrote the
/// checkpoint, under their option names: the model, the policy and its
/// settings, replicas, batch size, seed, the optimizer, the class weights
/// (named only when some class weighs other than 1) and the wire codec
/// (named only when not fp32). Epochs may differ.
std::vector<setting_text> resume_settings(const run_config& config);

class checked_run_config;

/// Checks a run against its data and fills in what follows from the rest
/// (the replica count, the number of store shards); every problem is a
/// bad_config or bad_data error naming the option. Opens no device and
/// connects to nothing.
caf::expected<checked_run_config> check_run_config(run_config config, const source_pair* data);

/// Checks a run against data held in memory.
caf::expected<checked_run_config> check_run_config(run_config config, const dataset_pair* data);

/// A run that check_run_config accepted against its data, and so the one
/// kind a run starts from without being checked again.
class checked_run_config : public run_config {
private:
  explicit checked_run_config(run_config config) : run_config(std::move(config)) {}
  friend caf::expected<checked_run_config> check_run_config(run_config config,
                                                            const source_pair* data);
};

} // namespace troupe::detail
