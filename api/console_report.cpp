// The console and metrics output of a fit.
#include "api/console_report.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>

#include <fmt/core.h>
#include <fmt/format.h>

#include "actors/policy/policy_registry.hpp"
#include "actors/report/progress_bar.hpp"
#include "actors/report/straggler_report.hpp"
#include "model/backend/cpu/gemm/gemm.hpp"
#include "model/model_description.hpp"
#include "model/numerics_identity.hpp"

namespace troupe::detail {

namespace {

std::string plural(uint64_t count, const char* one, const char* many) {
  return fmt::format("{} {}", count, count == 1 ? one : many);
}

// What one optimizer step is in this run's mode.
std::string step_text(const run_config& c) {
  const uint32_t share = (c.batch_size + c.replicas - 1) / c.replicas;
  if (traits_of(c.policy).steps_per_round)
    return fmt::format("a round of {} samples ({} per replica) is one optimizer step",
                       c.batch_size, share);
  return fmt::format("each replica's push of {} samples is an optimizer step of its own "
                     "({} per {} samples)",
                     share, plural(c.replicas, "step", "steps"), c.batch_size);
}

std::string store_text(const run_config& c) {
  auto store = plural(c.store_shards, "store shard", "store shards");
  if (!c.store_nodes.empty())
    store += " on " + plural(c.store_nodes.size(), "node", "nodes");
  if (c.store_device != "cpu")
    store += " in " + c.store_device + " memory";
  return store;
}

} // namespace

void print_banner(const std::string& program, const run_config& c, const source_pair& data) {
  const auto where = c.nodes.empty()
                       ? fmt::format("{}", fmt::join(c.devices.pool, ","))
                       : fmt::format("{} x {}", plural(c.nodes.size(), "node", "nodes"),
                                     c.replicas_per_node);
  fmt::print("Troupe {}: {} mode, {} on {}, {}, model {}, {}, {} lr {}, {} train / {} test "
             "samples from {}\n",
             program, c.policy.name, plural(c.replicas, "replica", "replicas"),
             c.devices.automatic && c.nodes.empty() ? "auto" : where, store_text(c), c.model,
             plural(c.epochs, "epoch", "epochs"), c.optimizer.name, c.optimizer.learning_rate,
             data.train->size(), data.test->size(), c.data_dir);
  fmt::print("Batch {} (global): {}\n", c.batch_size, step_text(c));
  const auto numerics = current_numerics();
  if (names_builtin_model(c.model))
    fmt::print("CPU numerics: GEMM kernel {} ({} multiply-add), {}, {}\n", numerics.gemm_kernel,
               numerics.gemm_family, numerics.build, numerics.libm);
  else
    fmt::print("CPU numerics: {}, {} (model {} computes with its own code)\n", numerics.build,
               numerics.libm, c.model);
  if (c.optimizer.global_clipnorm > 0.0f)
    fmt::print("Clipping: each step's whole gradient g times {0} / max(||g||, {0}) "
               "(--global-clipnorm)\n",
               c.optimizer.global_clipnorm);
  if (c.wire == float_codec::int8)
    fmt::print("Wire: gradients are int8 with one fp32 scale per block of 256 values and error "
               "feedback on each replica, the parameters shards answer with bf16; the shards "
               "keep fp32 masters (--wire)\n");
  else if (c.wire != float_codec::fp32)
    fmt::print("Wire: gradients and the parameters shards answer with are rounded to {} "
               "(16-bit values between processes); the shards keep fp32 masters (--wire)\n",
               codec_name(c.wire));
  if (c.policy.settings.backup_replicas > 0)
    fmt::print("Backup replicas: each round closes on the first {} of {} gradients; the "
               "late ones are dropped, so runs are not bitwise reproducible\n",
               c.replicas - c.policy.settings.backup_replicas, c.replicas);
  if (c.accept_joins)
    fmt::print("Joins: nodes may join this run at {} (node --join={})\n",
               c.accept_joins->text(), c.accept_joins->text());
  if (c.slow.factor != 1.0f)
    fmt::print("Straggler: replica {} takes {}x its compute per step\n", c.slow.index,
               c.slow.factor);
  if (auto warning = gemm_kernel_warning(); !warning.empty())
    std::fprintf(stderr, "warning: %s\n", warning.c_str());
  std::fflush(stdout);
}

fit_observer make_console_observer(const program_config& cfg, const run_config& c,
                                   reported_metrics scores, metrics_log* metrics,
                                   tensorboard_log* tensorboard, bool quiet) {
  const bool bar = !quiet && (cfg.progress == "bar"
                              || (cfg.progress == "auto" && isatty(STDOUT_FILENO)));
  fit_observer observer;
  observer.on_epoch = [bar, &cfg, c, scores, metrics, tensorboard,
                       quiet](const epoch_record& r) {
    if (bar)
      fmt::print("\r\033[K"); // the epoch line replaces the bar
    if (cfg.progress != "off" && !quiet)
      fmt::print("{}\n", progress_line(r, c.epochs, scores));
    std::fflush(stdout);
    if (metrics)
      metrics->write_epoch(r, c);
    if (tensorboard)
      tensorboard->write_epoch(r, scores);
  };
  if (bar || cfg.log_every > 0)
    observer.on_progress = [bar, &cfg, metrics, next_record = uint64_t{cfg.log_every}](
                             const epoch_progress& p) mutable {
      if (bar) {
        fmt::print("\rEpoch {}/{} {}", p.epoch, p.epochs, render_progress_bar(p));
        std::fflush(stdout);
      }
      if (metrics && cfg.log_every > 0 && p.version >= next_record) {
        metrics->write_step(p);
        next_record = (p.version / cfg.log_every + 1) * cfg.log_every;
      }
    };
  if (cfg.log_every > 0) // a poll per 20 ms keeps records near every N steps
    observer.progress_interval = std::chrono::milliseconds(bar ? 100 : 20);
  if (metrics) {
    observer.on_replacement = [metrics](const replacement_record& r) {
      metrics->write_replacement(r);
    };
    observer.on_recovery = [metrics](const recovery_record& r) { metrics->write_recovery(r); };
  }
  if (!quiet)
    observer.on_warning = [](const std::string& text) {
      std::fprintf(stderr, "warning: %s\n", text.c_str());
    };
  return observer;
}

void print_summary(const program_config& cfg, const run_config& c, reported_metrics scores,
                   const fit_summary& result) {
  const auto numerics = current_numerics();
  const std::string score =
    scores == reported_metrics::loss
      ? fmt::format("test_loss {:.4f}", result.test_loss)
      : fmt::format("test_accuracy {:.4f} - test_loss {:.4f}", result.test_accuracy,
                    result.test_loss);
  // A model of one's own computes with its own code, not Troupe's GEMM.
  const std::string gemm = names_builtin_model(c.model)
                             ? fmt::format(" (GEMM {}, {})", numerics.gemm_kernel,
                                           numerics.gemm_family)
                             : "";
  fmt::print("Final: {} - {:.0f} samples/s (training) - {} - params fnv1a64 {}{}\n", score,
             result.samples_per_second, plural(result.version, "step", "steps"),
             hex64(result.params_fnv1a64), gemm);
  if (cfg.progress != "off")
    for (const auto& line : straggler_lines(make_straggler_report(result)))
      fmt::print("  {}\n", line);
  std::fflush(stdout);
}

} // namespace troupe::detail
