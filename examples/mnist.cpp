// The Keras MNIST example (MLP 784 -> Dense(128, relu) -> Dense(10, softmax),
// Adam, sparse categorical cross-entropy, 5 epochs) as Troupe actors: in
// sync or async mode, over N replicas here or on nodes.
//
//   build/examples/mnist --mode=sync --replicas=2 --epochs=5 --batch-size=32
//   build/examples/mnist --help
#include <unistd.h>

#include <chrono>
#include <cstdio>

#include <caf/all.hpp>
#include <fmt/core.h>
#include <fmt/format.h>

#include "actors/cluster/cluster_config.hpp"
#include "actors/config/run_options.hpp"
#include "actors/policy/policy_registry.hpp"
#include "actors/report/metrics_log.hpp"
#include "actors/report/progress_bar.hpp"
#include "actors/report/straggler_report.hpp"
#include "actors/run/coordinator.hpp"
#include "messages/errors.hpp"
#include "model/backend/cpu/gemm/gemm.hpp"
#include "model/numerics_identity.hpp"

namespace {

using troupe::option_group;
using troupe::option_hint;

// The run's options, and what this program shows of it.
struct mnist_config : troupe::cluster_config {
  troupe::run_options run{*this};
  std::string metrics;
  std::string progress = "auto"; // auto | bar | lines | off
  uint32_t log_every = 0;        // a metrics "step" record at least every N steps

  mnist_config()
    : cluster_config("mnist", "Trains the Keras MNIST example's model on (Fashion-)MNIST with "
                              "Troupe: replicas and a variable store as CAF actors.") {
    bind(option_group::output, metrics, "metrics",
         "write JSON lines to this file: one per epoch, then a final record",
         option_hint{"FILE"});
    bind(option_group::output, progress, "progress",
         "auto (a live bar on a terminal, else lines), bar, lines (one per epoch) or off");
    bind(option_group::output, log_every, "log-every",
         "with --metrics, also a step record (loss, samples, time) every N steps (0: none)",
         option_hint{}.in("optimizer steps"));
  }
};

std::string plural(uint64_t count, const char* one, const char* many) {
  return fmt::format("{} {}", count, count == 1 ? one : many);
}

// What one optimizer step is in this run's mode.
std::string step_text(const troupe::run_config& c) {
  const uint32_t share = (c.batch_size + c.replicas - 1) / c.replicas;
  if (troupe::traits_of(c.policy).steps_per_round)
    return fmt::format("a round of {} samples ({} per replica) is one optimizer step",
                       c.batch_size, share);
  return fmt::format("each replica's push of {} samples is an optimizer step of its own "
                     "({} per {} samples)",
                     share, plural(c.replicas, "step", "steps"), c.batch_size);
}

void print_banner(const troupe::run_config& c, const troupe::dataset_pair& data) {
  const auto where = c.nodes.empty()
                       ? fmt::format("{}", fmt::join(c.devices.pool, ","))
                       : fmt::format("{} x {}", plural(c.nodes.size(), "node", "nodes"),
                                     c.replicas_per_node);
  auto store = plural(c.store_shards, "store shard", "store shards");
  if (!c.store_nodes.empty())
    store += " on " + plural(c.store_nodes.size(), "node", "nodes");
  if (c.store_device != "cpu")
    store += " in " + c.store_device + " memory";
  fmt::print("Troupe mnist: {} mode, {} on {}, {}, model {}, {}, {} lr {}, {} train / {} test "
             "samples from {}\n",
             c.policy.name, plural(c.replicas, "replica", "replicas"),
             c.devices.automatic && c.nodes.empty() ? "auto" : where, store, c.model,
             plural(c.epochs, "epoch", "epochs"), c.optimizer.name, c.optimizer.learning_rate,
             data.train.count, data.test.count, c.data_dir);
  fmt::print("Batch {} (global): {}\n", c.batch_size, step_text(c));
  const auto numerics = troupe::current_numerics();
  fmt::print("CPU numerics: GEMM kernel {} ({} multiply-add), {}, {}\n", numerics.gemm_kernel,
             numerics.gemm_family, numerics.build, numerics.libm);
  if (c.policy.settings.backup_replicas > 0)
    fmt::print("Backup replicas: each round closes on the first {} of {} gradients; the "
               "late ones are dropped, so runs are not bitwise reproducible\n",
               c.replicas - c.policy.settings.backup_replicas, c.replicas);
  if (c.slow.factor != 1.0f)
    fmt::print("Straggler: replica {} takes {}x its compute per step\n", c.slow.index,
               c.slow.factor);
  if (auto warning = troupe::gemm_kernel_warning(); !warning.empty())
    std::fprintf(stderr, "warning: %s\n", warning.c_str());
  std::fflush(stdout);
}

// Shows each epoch as a line (and a live bar on a terminal), and writes
// the metrics' epoch and step records.
troupe::fit_observer make_observer(const mnist_config& cfg, const troupe::run_config& c,
                                   troupe::metrics_log* metrics) {
  const bool bar = cfg.progress == "bar" || (cfg.progress == "auto" && isatty(STDOUT_FILENO));
  troupe::fit_observer observer;
  observer.on_epoch = [bar, &cfg, c, metrics](const troupe::epoch_record& r) {
    if (bar)
      fmt::print("\r\033[K"); // the epoch line replaces the bar
    if (cfg.progress != "off")
      fmt::print("{}\n", troupe::progress_line(r, c.epochs));
    std::fflush(stdout);
    if (metrics)
      metrics->write_epoch(r, c);
  };
  if (bar || cfg.log_every > 0)
    observer.on_progress = [bar, &cfg, metrics, next_record = uint64_t{cfg.log_every}](
                             const troupe::epoch_progress& p) mutable {
      if (bar) {
        fmt::print("\rEpoch {}/{} {}", p.epoch, p.epochs, troupe::render_progress_bar(p));
        std::fflush(stdout);
      }
      if (metrics && cfg.log_every > 0 && p.version >= next_record) {
        metrics->write_step(p);
        next_record = (p.version / cfg.log_every + 1) * cfg.log_every;
      }
    };
  if (cfg.log_every > 0) // a poll per 20 ms keeps records near every N steps
    observer.progress_interval = std::chrono::milliseconds(bar ? 100 : 20);
  observer.on_warning = [](const std::string& text) {
    std::fprintf(stderr, "warning: %s\n", text.c_str());
  };
  return observer;
}

void print_summary(const mnist_config& cfg, const troupe::fit_summary& result) {
  const auto numerics = troupe::current_numerics();
  fmt::print("Final: test_accuracy {:.4f} - test_loss {:.4f} - {:.0f} samples/s "
             "(training) - {} - params fnv1a64 {} (GEMM {}, {})\n",
             result.test_accuracy, result.test_loss, result.samples_per_second,
             plural(result.version, "step", "steps"), troupe::hex64(result.params_fnv1a64),
             numerics.gemm_kernel, numerics.gemm_family);
  if (cfg.progress != "off")
    for (const auto& line : troupe::straggler_lines(troupe::make_straggler_report(result)))
      fmt::print("  {}\n", line);
  std::fflush(stdout);
}

// Exits 2 for a bad option, 1 when the run failed.
int run(caf::actor_system& system, const mnist_config& cfg) {
  const auto fail = [](const caf::error& err, int code) {
    std::fprintf(stderr, "error: %s\n", troupe::describe(err).c_str());
    return code;
  };
  if (cfg.progress != "auto" && cfg.progress != "bar" && cfg.progress != "lines"
      && cfg.progress != "off")
    return fail(troupe::make_troupe_error(troupe::troupe_errc::bad_config,
                                          "--progress: '" + cfg.progress
                                            + "' (expected auto, bar, lines or off)"),
                2);
  if (cfg.log_every > 0 && cfg.metrics.empty())
    return fail(troupe::make_troupe_error(troupe::troupe_errc::bad_config,
                                          "--log-every needs --metrics=FILE"),
                2);
  auto config = cfg.run.to_run_config();
  if (!config)
    return fail(config.error(), 2);
  auto data = troupe::load_dataset(config->data_dir);
  if (!data)
    return fail(troupe::to_caf_error(data.error()), 1);
  // Every option is checked before anything is printed or written.
  auto checked = troupe::check_run_config(*config, &*data);
  if (!checked)
    return fail(checked.error(), 2);
  std::unique_ptr<troupe::metrics_log> metrics;
  if (!cfg.metrics.empty()) {
    auto log = troupe::metrics_log::open(cfg.metrics);
    if (!log)
      return fail(log.error(), 1);
    metrics = std::make_unique<troupe::metrics_log>(std::move(*log));
  }
  print_banner(*checked, *data);
  auto shared = std::make_shared<const troupe::dataset_pair>(std::move(*data));
  auto result = troupe::fit(system, *checked, shared, make_observer(cfg, *checked, metrics.get()));
  if (!result)
    return fail(result.error(), 1);
  print_summary(cfg, *result);
  if (metrics)
    metrics->write_summary(*result, *checked);
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
