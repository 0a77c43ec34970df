// The seed's Keras MNIST example as Troupe actors: an MLP 784-128relu-10
// trained with Adam, in sync or async mode, over N replicas.
//
//   build/examples/mnist --mode=sync --replicas=2 --epochs=5 --batch-size=32
//   build/examples/mnist --help
#include <cstdio>
#include <sstream>
#include <thread>

#include <caf/all.hpp>
#include <fmt/core.h>

#include "actors/cluster/cluster_config.hpp"
#include "actors/coordinator.hpp"
#include "actors/metrics_log.hpp"
#include "messages/errors.hpp"
#include "model/backend/cpu/gemm/gemm.hpp"
#include "model/numerics_identity.hpp"

namespace {

struct mnist_config : troupe::cluster_config {
  std::string mode = "sync";
  size_t replicas = std::max(1u, std::thread::hardware_concurrency());
  size_t epochs = 5;
  size_t batch_size = 32;
  std::string optimizer = "adam";
  double lr = 1e-3;
  double momentum = 0.0;
  size_t seed = 42;
  std::string model = "784-128relu-10";
  std::string data_dir = troupe::default_data_dir();
  std::string devices = "cpu";
  std::string metrics;
  std::string on_replica_loss = "abort";
  size_t step_timeout_ms = 60000;
  std::string nodes;
  size_t replicas_per_node = 1;
  std::string checkpoint;
  size_t checkpoint_every = 0;
  std::string resume;
  std::string store_node;

  mnist_config() {
    opt_group{custom_options_, "global"}
      .add(mode, "mode", "sync (one step per round from all replicas) or async")
      .add(replicas, "replicas", "number of replicas (default: number of cores)")
      .add(epochs, "epochs", "passes over the training set")
      .add(batch_size, "batch-size", "samples per round across all replicas")
      .add(optimizer, "optimizer", "adam or sgd")
      .add(lr, "lr", "learning rate")
      .add(momentum, "momentum", "momentum for sgd")
      .add(seed, "seed", "seed of initial weights and shuffles")
      .add(model, "model", "layer list, e.g. 784-128relu-10")
      .add(data_dir, "data-dir", "directory with the four (Fashion-)MNIST IDX files")
      .add(devices, "devices", "cpu, cuda:0,cuda:1,... (round-robin) or auto")
      .add(metrics, "metrics", "write JSON lines (one per epoch + final) to this file")
      .add(on_replica_loss, "on-replica-loss", "abort (default) or continue")
      .add(step_timeout_ms, "step-timeout", "milliseconds to wait for one push's answer")
      .add(nodes, "nodes", "HOST:PORT,HOST:PORT of node programs to run the replicas on")
      .add(replicas_per_node, "replicas-per-node", "replicas on each node (with --nodes)")
      .add(checkpoint, "checkpoint", "write checkpoints to this file (atomically)")
      .add(checkpoint_every, "checkpoint-every",
           "also checkpoint every N sync rounds (default: after each epoch only)")
      .add(resume, "resume", "continue the run saved in this checkpoint")
      .add(store_node, "store-node", "HOST:PORT of a node to run the variable store on");
  }
};

int run(caf::actor_system& system, const mnist_config& cfg) {
  troupe::fit_options options;
  options.mode = cfg.mode;
  options.replicas = static_cast<uint32_t>(cfg.replicas);
  options.epochs = static_cast<uint32_t>(cfg.epochs);
  options.batch_size = static_cast<uint32_t>(cfg.batch_size);
  options.model = cfg.model;
  options.optimizer.name = cfg.optimizer;
  options.optimizer.learning_rate = static_cast<float>(cfg.lr);
  options.optimizer.momentum = static_cast<float>(cfg.momentum);
  options.seed = cfg.seed;
  options.devices = cfg.devices;
  options.on_replica_loss = cfg.on_replica_loss;
  options.step_timeout_ms = static_cast<uint32_t>(cfg.step_timeout_ms);
  options.data_dir = cfg.data_dir;
  options.tls = cfg.tls();
  options.replicas_per_node = static_cast<uint32_t>(cfg.replicas_per_node);
  options.checkpoint_path = cfg.checkpoint;
  options.checkpoint_every = static_cast<uint32_t>(cfg.checkpoint_every);
  options.resume_path = cfg.resume;
  options.protocol_version = static_cast<uint32_t>(cfg.protocol_version);
  options.pin_cores = cfg.pin_cores;
  options.store_node = cfg.store_node;
  if (options.checkpoint_every > 0 && options.checkpoint_path.empty()) {
    std::fprintf(stderr, "error: --checkpoint-every needs --checkpoint=PATH\n");
    return 2;
  }
  std::stringstream node_list(cfg.nodes);
  for (std::string node; std::getline(node_list, node, ',');)
    if (!node.empty())
      options.nodes.push_back(node);

  auto data = troupe::load_dataset(cfg.data_dir);
  if (!data) {
    std::fprintf(stderr, "error: %s\n", data.error().message.c_str());
    return 1;
  }
  // Every option is checked before anything is printed or written.
  auto checked = troupe::check_fit_options(options, &*data);
  if (!checked) {
    std::fprintf(stderr, "error: %s\n", troupe::describe(checked.error()).c_str());
    return 2;
  }
  options = std::move(*checked);
  std::unique_ptr<troupe::metrics_log> metrics;
  if (!cfg.metrics.empty()) {
    auto log = troupe::metrics_log::open(cfg.metrics);
    if (!log) {
      std::fprintf(stderr, "error: %s\n", troupe::describe(log.error()).c_str());
      return 1;
    }
    metrics = std::make_unique<troupe::metrics_log>(std::move(*log));
  }
  const auto where = options.nodes.empty()
                       ? options.devices
                       : fmt::format("{} nodes x {}", options.nodes.size(),
                                     options.replicas_per_node);
  fmt::print("Troupe mnist: {} mode, {} replicas on {}, model {}, batch {} (global), "
             "{} epochs, {} lr {}, {} train / {} test samples from {}\n",
             options.mode, options.replicas, where, options.model,
             options.batch_size, options.epochs, options.optimizer.name, cfg.lr,
             data->train.count, data->test.count, cfg.data_dir);
  const auto numerics = troupe::current_numerics();
  fmt::print("CPU numerics: GEMM kernel {} ({} multiply-add), {}, {}\n", numerics.gemm_kernel,
             numerics.gemm_family, numerics.build, numerics.libm);
  if (auto warning = troupe::gemm_kernel_warning(); !warning.empty())
    std::fprintf(stderr, "warning: %s\n", warning.c_str());
  std::fflush(stdout);
  auto shared = std::make_shared<const troupe::dataset_pair>(std::move(*data));
  troupe::fit_observer observer;
  observer.on_epoch = [&](const troupe::epoch_record& r) {
    fmt::print("{}\n", troupe::progress_line(r, options.epochs));
    std::fflush(stdout);
    if (metrics)
      metrics->write_epoch(r, options);
  };
  observer.on_warning = [](const std::string& text) {
    std::fprintf(stderr, "warning: %s\n", text.c_str());
  };
  auto result = troupe::fit(system, options, shared, std::move(observer));
  if (!result) {
    std::fprintf(stderr, "error: %s\n", troupe::describe(result.error()).c_str());
    return 1;
  }
  fmt::print("Final: test_accuracy {:.4f} - test_loss {:.4f} - {:.0f} samples/s "
             "(training) - {} steps - params fnv1a64 {} (GEMM {}, {})\n",
             result->test_accuracy, result->test_loss, result->samples_per_second,
             result->version, troupe::hex64(result->params_fnv1a64), numerics.gemm_kernel,
             numerics.gemm_family);
  std::fflush(stdout);
  if (metrics)
    metrics->write_summary(*result, options);
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0); // a killed run keeps its last lines
  mnist_config cfg;
  if (auto exit_code = cfg.parse_and_prepare(argc, argv))
    return *exit_code;
  caf::actor_system system{cfg};
  return run(system, cfg);
}
