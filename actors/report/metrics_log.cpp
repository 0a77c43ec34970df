// Progress lines and JSON-lines metrics (nlohmann-json).
#include "actors/report/metrics_log.hpp"

#include <cerrno>
#include <cstring>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "actors/report/straggler_report.hpp"

#include "messages/errors.hpp"
#include "model/numerics_identity.hpp"

namespace troupe::detail {

std::string hex64(uint64_t value) {
  return fmt::format("{:016x}", value);
}

std::string progress_line(const epoch_record& r, uint32_t epochs, reported_metrics metrics) {
  auto line =
    metrics == reported_metrics::loss
      ? fmt::format("Epoch {}/{} - {:.2f}s - loss: {:.4f} - test_loss: {:.4f}", r.epoch, epochs,
                    r.seconds, r.train_loss, r.test_loss)
      : fmt::format("Epoch {}/{} - {:.2f}s - loss: {:.4f} - accuracy: {:.4f} - "
                    "test_loss: {:.4f} - test_accuracy: {:.4f}",
                    r.epoch, epochs, r.seconds, r.train_loss, r.train_accuracy, r.test_loss,
                    r.test_accuracy);
  for (const auto& [name, value] : r.test_metrics)
    line += fmt::format(" - test_{}: {:.4f}", name, value);
  line += fmt::format(" - {:.0f} samples/s", r.samples_per_second);
  if (r.staleness_reported)
    line += fmt::format(" - staleness mean {:.2f} max {}", r.staleness_mean, r.staleness_max);
  if (r.dropped > 0)
    line += fmt::format(" - dropped {}", r.dropped);
  const double replica_time = r.compute_seconds + r.wait_seconds;
  if (replica_time > 0)
    line += fmt::format(" - replicas: compute {:.0f}% wait {:.0f}%, store apply {:.2f}s",
                        100 * r.compute_seconds / replica_time,
                        100 * r.wait_seconds / replica_time, r.apply_seconds);
  if (r.live_replicas > 0)
    line += fmt::format(" - {} live", r.live_replicas);
  if (r.live_nodes > 0)
    line += fmt::format(" on {} {}", r.live_nodes, r.live_nodes == 1 ? "node" : "nodes");
  if (r.respawns > 0)
    line += fmt::format(", {} {} so far", r.respawns, r.respawns == 1 ? "respawn" : "respawns");
  return line;
}

caf::expected<metrics_log> metrics_log::open(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "w");
  if (file == nullptr)
    return make_troupe_error(troupe_errc::bad_config,
                             "--metrics: cannot write " + path + ": " + std::strerror(errno));
  return metrics_log(file);
}

void metrics_log::write_line(const std::string& line) {
  std::fputs(line.c_str(), file_.get());
  std::fputc('\n', file_.get());
  std::fflush(file_.get());
}

void metrics_log::write_epoch(const epoch_record& r, const run_config& options) {
  nlohmann::json j = {
    {"record", "epoch"},           {"epoch", r.epoch},
    {"mode", options.policy.name},       {"replicas", options.replicas},
    {"loss", r.train_loss},        {"accuracy", r.train_accuracy},
    {"test_loss", r.test_loss},    {"test_accuracy", r.test_accuracy},
    {"samples", r.samples},        {"seconds", r.seconds},
    {"samples_per_second", r.samples_per_second},
    {"staleness_mean", r.staleness_mean}, {"staleness_max", r.staleness_max},
    {"dropped", r.dropped},
    {"staleness_histogram", r.staleness_histogram},
    {"compute_seconds", r.compute_seconds}, {"wait_seconds", r.wait_seconds},
    {"apply_seconds", r.apply_seconds}, {"pushes", r.pushes},
    {"version", r.version},        {"live_replicas", r.live_replicas},
    {"live_nodes", r.live_nodes},  {"respawns", r.respawns},
    {"fenced", r.fenced},          {"fenced_answers", r.fenced_answers},
    {"membership", r.membership},  {"learning_rate", r.learning_rate},
    {"delta_answers", r.coded.answers}, {"delta_answer_bytes", r.coded.answer_bytes},
    {"delta_answer_whole_bytes", r.coded.answer_whole_bytes},
    {"masked_pushes", r.coded.pushes}, {"masked_push_bytes", r.coded.push_bytes},
    {"masked_push_whole_bytes", r.coded.push_whole_bytes},
    {"pushes_ahead", r.coded.pushes_ahead},
  };
  for (const auto& [name, value] : r.test_metrics)
    j["test_" + name] = value;
  write_line(j.dump());
}

void metrics_log::write_step(const epoch_progress& p) {
  nlohmann::json j = {
    {"record", "step"},         {"epoch", p.epoch},
    {"step", p.version},        {"samples", p.run_samples},
    {"seconds", p.run_seconds}, {"loss", p.train_loss},
  };
  write_line(j.dump());
}

void metrics_log::write_replacement(const replacement_record& r) {
  const bool heal = r.kind == replacement_kind::store_heal;
  const char* name = heal ? "store_heal" : r.kind == replacement_kind::move ? "move" : "respawn";
  nlohmann::json j = {
    {"record", name},        {heal ? "shard" : "replica", r.index}, {"epoch", r.epoch},
    {"round", r.round},      {"lost_on", r.lost_on},           {"respawned_on", r.respawned_on},
    {"reason", r.reason},    {"milliseconds", r.milliseconds}, {"noticed_at", r.noticed_at},
    {"membership", r.membership},
  };
  write_line(j.dump());
}

void metrics_log::write_recovery(const recovery_record& r) {
  nlohmann::json j = {
    {"record", "recovery"},   {"after", r.after},         {"round", r.round},
    {"membership", r.membership}, {"closed_ms", r.closed_ms}, {"closed_at", r.closed_at},
  };
  write_line(j.dump());
}

void metrics_log::write_summary(const fit_summary& s, const run_config& options) {
  const auto numerics = current_numerics(); // what decided the bits of the checksum
  nlohmann::json j = {
    {"record", "final"},
    {"mode", s.mode},
    {"replicas", s.replicas},
    {"live_replicas", s.live_replicas},
    {"respawns", s.respawns},
    {"store_heals", s.store_heals},
    {"membership", s.membership},
    {"epochs", s.epochs},
    {"batch_size", options.batch_size},
    {"seed", options.seed},
    {"model", options.model},
    {"parameters", s.params.size()},
    {"test_loss", s.test_loss},
    {"test_accuracy", s.test_accuracy},
    {"samples_per_second", s.samples_per_second},
    {"version", s.version},
    {"params_fnv1a64", hex64(s.params_fnv1a64)},
    {"gemm_kernel", numerics.gemm_kernel},
    {"gemm_family", numerics.gemm_family},
    {"numerics_build", numerics.build},
  };
  const auto report = make_straggler_report(s);
  nlohmann::json replicas = nlohmann::json::array();
  for (const auto& pace : report.replicas)
    replicas.push_back({{"replica", pace.replica},
                        {"compute_ms_per_sample", pace.compute_ms_per_sample},
                        {"wait_fraction", pace.wait_fraction},
                        {"rounds_waited_on", pace.rounds_waited_on},
                        {"lost", pace.lost}});
  j["replica_pace"] = replicas;
  j["slowest_replica"] = report.slowest;
  j["straggler"] = report.straggler ? nlohmann::json(*report.straggler) : nlohmann::json();
  write_line(j.dump());
}

} // namespace troupe::detail
