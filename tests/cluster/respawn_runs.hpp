// What the respawn and store-heal tests share: a sync run long enough to
// kill a node in, its placement on nodes, and the check that it ends with
// the bits of one process running as many replicas.
#pragma once

#include <regex>
#include <thread>

#include "tests/cluster/cluster_test.hpp"

namespace troupe::respawn_runs {

using namespace troupe::cluster_test;

// A sync run long enough (one sample per replica and round) that the first
// epoch line comes well before the end; `extra` adds the placement.
inline std::vector<std::string> run_args(uint32_t replicas, std::vector<std::string> extra) {
  std::vector<std::string> args{"--mode=sync", "--epochs=4",
                                "--batch-size=" + std::to_string(replicas), "--seed=11"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

// run_args with the replicas on `nodes`, `per_node` each, in the default
// layout: the store's shards on those nodes too.
inline std::vector<std::string> on_nodes(uint32_t replicas,
                                         const std::vector<const node_process*>& nodes,
                                         uint32_t per_node, std::vector<std::string> extra = {}) {
  std::string list;
  for (const auto* node : nodes)
    list += (list.empty() ? "" : ",") + node->address;
  extra.push_back("--nodes=" + list);
  extra.push_back("--replicas-per-node=" + std::to_string(per_node));
  return run_args(replicas, std::move(extra));
}

// on_nodes with the store in the coordinator: a node's death takes replicas only.
inline std::vector<std::string> replicas_on(uint32_t replicas,
                                            const std::vector<const node_process*>& nodes,
                                            uint32_t per_node, std::vector<std::string> extra = {}) {
  extra.push_back("--store-nodes=here");
  return on_nodes(replicas, nodes, per_node, std::move(extra));
}

// An address for the coordinator's --accept-joins door: a loopback port
// nobody listens on, which the coordinator then takes.
inline std::string free_join_door() {
  refused_port free;
  return "127.0.0.1:" + std::to_string(free.port());
}

// Starts node `name`, which joins the run at `door`, and waits until it
// says it hosts replica `replica`.
inline node_process join_run(const temp_dir& dir, const std::string& name,
                             const std::string& door, uint32_t replica) {
  auto node = start_node(dir, name, {"--join=" + door});
  CLUSTER_REQUIRE(node.proc->wait_for_line(stream::out, "joined the run at " + door
                                                          + ", hosting replica "
                                                          + std::to_string(replica),
                                           line_timeout),
                  node.proc.get());
  return node;
}

// Starts the coordinator and waits for its first epoch line, then half an
// epoch more when `mid_epoch`.
inline std::unique_ptr<process> start_run(const temp_dir& dir, std::vector<std::string> args,
                                          bool mid_epoch) {
  args.push_back("--metrics=" + dir.file("coordinator.jsonl"));
  auto coordinator =
    std::make_unique<process>(mnist_command(std::move(args)), dir.path(), "coordinator");
  CLUSTER_REQUIRE(coordinator->wait_for_line(stream::out, "Epoch 1/4", line_timeout),
                  coordinator.get());
  if (mid_epoch) {
    // The epoch line may be out before the metrics file has its record.
    const auto deadline = clock_type::now() + line_timeout;
    auto epochs = records_of(read_metrics(dir.file("coordinator.jsonl")), "epoch");
    while (epochs.empty() && clock_type::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      epochs = records_of(read_metrics(dir.file("coordinator.jsonl")), "epoch");
    }
    REQUIRE(epochs.size() == 1);
    const double seconds = epochs[0]["seconds"].get<double>();
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds / 2));
  }
  CLUSTER_REQUIRE(coordinator->running(), coordinator.get());
  return coordinator;
}

// Starts the coordinator, waits for its first epoch line, and kills `victim`.
inline std::unique_ptr<process> start_and_kill(const temp_dir& dir,
                                               std::vector<std::string> args,
                                               node_process& victim) {
  auto coordinator = start_run(dir, std::move(args), false);
  victim.proc->send(SIGKILL);
  return coordinator;
}

// The final checksum of a run that ended well.
inline std::string final_checksum(const std::vector<nlohmann::json>& metrics) {
  const auto finals = records_of(metrics, "final");
  REQUIRE(finals.size() == 1);
  return finals[0]["params_fnv1a64"].get<std::string>();
}

// Checks that each epoch of the run of `metrics` counted as many samples
// and pushes as the one process of `local`.
inline void expect_same_epoch_counts(const std::vector<nlohmann::json>& metrics,
                                     const std::vector<nlohmann::json>& local) {
  const auto epochs = records_of(metrics, "epoch");
  const auto local_epochs = records_of(local, "epoch");
  REQUIRE(epochs.size() == local_epochs.size());
  for (size_t e = 0; e < epochs.size(); ++e) {
    INFO("epoch " << e + 1);
    CHECK(epochs[e]["samples"] == local_epochs[e]["samples"]);
    CHECK(epochs[e]["pushes"] == local_epochs[e]["pushes"]);
  }
}

// Checks that the run of `metrics` ends with the checksum of the one
// process of `local`, with the same counts in each epoch.
inline void expect_local_run(const std::vector<nlohmann::json>& metrics,
                             const std::vector<nlohmann::json>& local) {
  CHECK(final_checksum(metrics) == final_checksum(local));
  expect_same_epoch_counts(metrics, local);
}

// Runs one process of `replicas` replicas with the same settings (and
// `extra`) and checks the run whose metrics are at `metrics` against it
// (expect_local_run).
inline void expect_local_bits(const temp_dir& dir, uint32_t replicas, const std::string& metrics,
                              std::vector<std::string> extra = {}) {
  extra.insert(extra.begin(), "--replicas=" + std::to_string(replicas));
  auto local = run_mnist(dir, "local", run_args(replicas, std::move(extra)), run_timeout);
  INFO(local.description);
  REQUIRE(local.status.code == 0);
  expect_local_run(read_metrics(metrics), local.metrics);
}

// Runs 2 replicas (and `extra`) on two fresh nodes (started with
// `node_options`), kills the second mid-run, and returns the coordinator's
// metrics once the run ended well with that one respawn.
inline std::vector<nlohmann::json> metrics_of_killed_node_run(
  const temp_dir& dir, std::vector<std::string> extra,
  const std::vector<std::string>& node_options = {}) {
  auto a = start_node(dir, "node-a", node_options);
  auto b = start_node(dir, "node-b", node_options);
  auto coordinator = start_and_kill(dir, replicas_on(2, {&a, &b}, 1, std::move(extra)), b);
  const auto status = coordinator->wait(run_timeout);
  INFO(to_string(status));
  CLUSTER_REQUIRE(status.exited, coordinator.get());
  CLUSTER_REQUIRE(status.code == 0, coordinator.get());
  auto metrics = read_metrics(dir.file("coordinator.jsonl"));
  CHECK(records_of(metrics, "respawn").size() == 1);
  return metrics;
}

inline size_t count_of(const std::string& text, const std::regex& pattern) {
  return static_cast<size_t>(
    std::distance(std::sregex_iterator(text.begin(), text.end(), pattern), std::sregex_iterator()));
}

} // namespace troupe::respawn_runs
