// The coordinator: the fit loop. It spawns the store and the replicas, runs the
// epochs, evaluates on the test set after each one and shuts everything down.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <caf/expected.hpp>
#include <caf/fwd.hpp>

#include "messages/protocol.hpp"
#include "model/data/dataset.hpp"
#include "model/optim/optimizer.hpp"

namespace troupe {

/// Describes a whole training run.
struct fit_options {
  std::string mode = "sync";            // sync | async
  uint32_t replicas = 2;
  uint32_t epochs = 5;
  uint32_t batch_size = 32;             // global: samples per round over all replicas
  std::string model = "784-128relu-10";
  optimizer_config optimizer;
  uint64_t seed = 42;
  std::string devices = "cpu";          // cpu | cuda:0,cuda:1,... | auto (round-robin)
  std::string on_replica_loss = "abort"; // abort | continue
  uint32_t step_timeout_ms = 60000;     // bound on one push's answer
  uint32_t fail_replica = 0;            // fault injection: replica index ...
  uint32_t fail_at_push = 0;            // ... throws at this push (0: never)
  std::vector<std::string> nodes;       // HOST:PORT of node programs; empty: all local
  uint32_t replicas_per_node = 1;       // with nodes: replicas = nodes * replicas_per_node
  std::string data_dir;                 // where nodes read the data (their own disk)
  bool tls = false;                     // connect to nodes over mutual TLS
  std::string checkpoint_path;          // write checkpoints here ...
  uint32_t checkpoint_every = 0;        // ... every N sync rounds, and after each epoch
  std::string resume_path;              // continue the run saved in this checkpoint
  uint32_t protocol_version = 0;        // to announce to nodes; 0: this build's
  bool pin_cores = false;               // pin replica i to core i % cores
  std::string store_node;               // HOST:PORT of a node for the store; empty: here
};

/// Hashes the settings a resumed run must share with the run that wrote the
/// checkpoint (mode, replicas, batch, seed, model, optimizer); epochs may differ.
uint64_t run_fingerprint(const fit_options& options);

/// Sums one epoch for progress lines and metrics.
struct epoch_record {
  uint32_t epoch = 0; // 1-based, as Keras prints it
  double train_loss = 0;
  double train_accuracy = 0;
  double test_loss = 0;
  double test_accuracy = 0;
  uint64_t samples = 0;
  double seconds = 0;            // the training loop only
  double samples_per_second = 0;
  double staleness_mean = 0;
  uint64_t staleness_max = 0;
  double compute_seconds = 0;    // summed over replicas
  double wait_seconds = 0;       // summed over replicas: push to answer
  double apply_seconds = 0;      // in the store: reduce + optimizer + publish
  uint64_t pushes = 0;
  uint64_t version = 0;
  uint32_t live_replicas = 0;
};

/// Receives each epoch's record as soon as it is known.
using epoch_observer = std::function<void(const epoch_record&)>;

/// Returns the device of each replica for a --devices value: "cpu", a list
/// such as "cuda:0,cuda:1" assigned round-robin, or "auto".
caf::expected<std::vector<std::string>> assign_devices(const std::string& devices,
                                                  uint32_t replicas);

/// Runs a fit to the end and returns its summary, or the error that stopped
/// it. Every wait inside is bounded; nothing is left running afterwards.
caf::expected<fit_summary> fit(caf::actor_system& system, const fit_options& options,
                          std::shared_ptr<const dataset_pair> data,
                          epoch_observer observer = {});

} // namespace troupe
