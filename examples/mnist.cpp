// The seed's Keras MNIST example as Troupe actors: an MLP 784-128relu-10
// trained with Adam, in sync or async mode, over N replicas.
//
//   build/examples/mnist --mode=sync --replicas=2 --epochs=5 --batch-size=32
//   build/examples/mnist --help
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <sstream>

#include <caf/all.hpp>
#include <fmt/core.h>

#include "actors/cluster/cluster_config.hpp"
#include "actors/threads/core_pinning.hpp"
#include "actors/run/coordinator.hpp"
#include "actors/report/metrics_log.hpp"
#include "actors/report/progress_bar.hpp"
#include "actors/report/straggler_report.hpp"
#include "messages/errors.hpp"
#include "model/backend/cpu/gemm/gemm.hpp"
#include "model/numerics_identity.hpp"

namespace {

// The command line binds straight into the fit_options the run uses; only
// what is not a fit option (metrics, the node list's text) stays here.
struct mnist_config : troupe::cluster_config {
  troupe::fit_options options;
  std::string metrics;
  std::string progress = "auto"; // auto | bar | lines | off
  uint32_t log_every = 0;        // a metrics "step" record at least every N steps
  std::string nodes;       // HOST:PORT,HOST:PORT, split into options.nodes by run()
  std::string store_nodes; // the same, into options.store_nodes

  mnist_config() {
    options.replicas = troupe::usable_cores();
    options.data_dir = troupe::default_data_dir();
    auto& o = options;
    opt_group{custom_options_, "global"}
      .add(o.mode, "mode",
           "sync (one step per round from all replicas), async, ssp (async, at most "
           "--staleness pushes ahead) or delayed (every gradient exactly --staleness "
           "versions stale, reproducible)")
      .add(o.staleness, "staleness",
           "ssp: pushes a replica may run ahead of the slowest live one (0: as sync); "
           "delayed: K >= 1 versions every gradient is stale")
      .add(o.backup_replicas, "backup-replicas",
           "sync: close each round on the first replicas - N gradients and drop the late "
           "ones (gives up bitwise reproducibility)")
      .add(o.staleness_lr, "staleness-lr",
           "async, ssp: none, or inverse (a gradient of staleness t steps at lr / max(1, t))")
      .add(o.slow_replica, "slow-replica",
           "I:F makes replica I take F times its compute per step (a reproducible straggler)")
      .add(o.replicas, "replicas", "number of replicas (default: number of cores)")
      .add(o.epochs, "epochs", "passes over the training set")
      .add(o.batch_size, "batch-size", "samples per round across all replicas")
      .add(o.optimizer.name, "optimizer", "adam or sgd")
      .add(o.optimizer.learning_rate, "lr", "learning rate")
      .add(o.optimizer.momentum, "momentum", "momentum for sgd")
      .add(o.seed, "seed", "seed of initial weights and shuffles")
      .add(o.model, "model", "layer list, e.g. 784-128relu-10")
      .add(o.data_dir, "data-dir", "directory with the four (Fashion-)MNIST IDX files")
      .add(o.devices, "devices", "cpu, cuda:0,cuda:1,... (round-robin) or auto")
      .add(metrics, "metrics", "write JSON lines (one per epoch + final) to this file")
      .add(progress, "progress",
           "auto (a live bar on a terminal, else lines), bar, lines (one per epoch) or off")
      .add(o.trace_path, "trace",
           "write a Chrome trace of every round (Perfetto, chrome://tracing) to this file")
      .add(log_every, "log-every",
           "with --metrics, also a step record (loss, samples, time) every N steps")
      .add(o.on_replica_loss, "on-replica-loss", "abort (default) or continue")
      .add(o.step_timeout_ms, "step-timeout", "milliseconds to wait for one push's answer")
      .add(nodes, "nodes", "HOST:PORT,HOST:PORT of node programs to run the replicas on")
      .add(o.replicas_per_node, "replicas-per-node", "replicas on each node (with --nodes)")
      .add(o.checkpoint_path, "checkpoint", "write checkpoints to this file (atomically)")
      .add(o.checkpoint_every, "checkpoint-every",
           "also checkpoint every N sync rounds (default: after each epoch only)")
      .add(o.resume_path, "resume", "continue the run saved in this checkpoint")
      .add(o.store_shards, "store-shards",
           "store shard actors, each owning a range of the parameters (default: one per "
           "replica, at most one per core; with --store-nodes one per node; with "
           "--store-device=cuda:N one)")
      .add(store_nodes, "store-nodes", "HOST:PORT,HOST:PORT of nodes to run the store shards "
                                       "on, round-robin")
      .add(o.store_node, "store-node", "HOST:PORT of one node to run the variable store on")
      .add(o.store_device, "store-device",
           "cpu (default) or cuda:N: where the store shards keep and step the parameters "
           "(replicas on the same device hand gradients over in device memory)");
  }
};

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream list(text);
  for (std::string item; std::getline(list, item, ',');)
    if (!item.empty())
      items.push_back(item);
  return items;
}

int run(caf::actor_system& system, const mnist_config& cfg) {
  troupe::fit_options options = cfg.options;
  // What the cluster config (shared with the node program) read.
  options.tls = cfg.tls();
  options.protocol_version = static_cast<uint32_t>(cfg.protocol_version);
  options.pin_cores = cfg.pin_cores;
  options.nodes = split_list(cfg.nodes);
  options.store_nodes = split_list(cfg.store_nodes);

  if (cfg.progress != "auto" && cfg.progress != "bar" && cfg.progress != "lines"
      && cfg.progress != "off") {
    std::fprintf(stderr, "error: --progress: '%s' (expected auto, bar, lines or off)\n",
                 cfg.progress.c_str());
    return 2;
  }
  if (cfg.log_every > 0 && cfg.metrics.empty()) {
    std::fprintf(stderr, "error: --log-every needs --metrics=FILE\n");
    return 2;
  }
  const bool bar = cfg.progress == "bar" || (cfg.progress == "auto" && isatty(STDOUT_FILENO));
  auto data = troupe::load_dataset(options.data_dir);
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
  auto store = options.store_nodes.empty()
                 ? fmt::format("{} store shards", options.store_shards)
                 : fmt::format("{} store shards on {} nodes", options.store_shards,
                               options.store_nodes.size());
  if (options.store_device != "cpu")
    store += " in " + options.store_device + " memory";
  fmt::print("Troupe mnist: {} mode, {} replicas on {}, {}, model {}, batch {} (global), "
             "{} epochs, {} lr {}, {} train / {} test samples from {}\n",
             options.mode, options.replicas, where, store, options.model,
             options.batch_size, options.epochs, options.optimizer.name, options.optimizer.learning_rate,
             data->train.count, data->test.count, options.data_dir);
  const auto numerics = troupe::current_numerics();
  fmt::print("CPU numerics: GEMM kernel {} ({} multiply-add), {}, {}\n", numerics.gemm_kernel,
             numerics.gemm_family, numerics.build, numerics.libm);
  if (options.backup_replicas > 0)
    fmt::print("Backup replicas: each round closes on the first {} of {} gradients; the "
               "late ones are dropped, so runs are not bitwise reproducible\n",
               options.replicas - options.backup_replicas, options.replicas);
  if (options.slow_factor != 1.0f)
    fmt::print("Straggler: replica {} takes {}x its compute per step\n", options.slow_index,
               options.slow_factor);
  if (auto warning = troupe::gemm_kernel_warning(); !warning.empty())
    std::fprintf(stderr, "warning: %s\n", warning.c_str());
  std::fflush(stdout);
  auto shared = std::make_shared<const troupe::dataset_pair>(std::move(*data));
  troupe::fit_observer observer;
  observer.on_epoch = [&](const troupe::epoch_record& r) {
    if (bar)
      fmt::print("\r\033[K"); // the epoch line replaces the bar
    if (cfg.progress != "off")
      fmt::print("{}\n", troupe::progress_line(r, options.epochs));
    std::fflush(stdout);
    if (metrics)
      metrics->write_epoch(r, options);
  };
  uint64_t next_step_record = cfg.log_every;
  if (bar || cfg.log_every > 0)
    observer.on_progress = [&](const troupe::epoch_progress& p) {
      if (bar) {
        fmt::print("\rEpoch {}/{} {}", p.epoch, p.epochs, troupe::render_progress_bar(p));
        std::fflush(stdout);
      }
      if (metrics && cfg.log_every > 0 && p.version >= next_step_record) {
        metrics->write_step(p);
        next_step_record = (p.version / cfg.log_every + 1) * cfg.log_every;
      }
    };
  if (cfg.log_every > 0) // a poll per 20 ms keeps records near every N steps
    observer.progress_interval = std::chrono::milliseconds(bar ? 100 : 20);
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
  if (cfg.progress != "off")
    for (const auto& line : troupe::straggler_lines(troupe::make_straggler_report(*result)))
      fmt::print("  {}\n", line);
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
