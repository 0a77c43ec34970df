// Failures across processes: a node killed (kill -9) or frozen (SIGSTOP)
// mid-run, a coordinator killed under a node, a node nobody listens for.
#include "tests/cluster/cluster_test.hpp"

#include <filesystem>
#include <regex>

using namespace troupe::cluster_test;

namespace {

// A sync run of two nodes x 1 replica long enough (small batches, 4 epochs)
// that the first epoch line comes well before the end.
std::vector<std::string> long_run(const node_process& a, const node_process& b,
                                  const std::string& on_loss, const std::string& metrics) {
  return mnist_command({"--nodes=" + a.address + "," + b.address, "--replicas-per-node=1",
                        "--store-nodes=here", "--mode=sync", "--epochs=4", "--batch-size=8", "--seed=11",
                        "--on-replica-loss=" + on_loss, "--metrics=" + metrics});
}

// Waits for the end of epoch 1 and checks the run is still going.
void wait_until_mid_run(process& coordinator) {
  CLUSTER_REQUIRE(coordinator.wait_for_line(stream::out, "Epoch 1/4", line_timeout),
                  &coordinator);
  CLUSTER_REQUIRE(coordinator.running(), &coordinator);
}

// Waits for a coordinator whose run must fail: it exits 1 of itself within
// `seconds` of the call.
void expect_failed_within_seconds(process& coordinator, double seconds) {
  const auto status = coordinator.wait(exit_timeout);
  INFO(to_string(status));
  CLUSTER_REQUIRE(!status.timed_out, &coordinator);
  CLUSTER_REQUIRE(status.exited, &coordinator);
  CLUSTER_CHECK(status.code == 1, &coordinator);
  CHECK(status.seconds < seconds);
}

} // namespace

TEST_CASE("a node killed mid-run with on-replica-loss continue leaves a run that finishes "
          "on the survivor with every sample counted",
          "[cluster][failure][kill]") {
  const auto start = clock_type::now();
  temp_dir dir{"troupe-cluster"};
  auto a = start_node(dir, "node-a");
  auto b = start_node(dir, "node-b");
  const auto metrics = dir.file("metrics.jsonl");
  process coordinator{long_run(a, b, "continue", metrics), dir.path(), "coordinator"};
  wait_until_mid_run(coordinator);
  b.proc->send(SIGKILL);
  const auto status = coordinator.wait(run_timeout);
  INFO(to_string(status));
  CLUSTER_REQUIRE(status.exited, &coordinator);
  CLUSTER_REQUIRE(status.code == 0, &coordinator);
  // The loss happened mid-run: in epoch 2, 3 or 4, and was reported as such.
  const auto err = coordinator.err();
  static const std::regex died{R"(warning: replica 1 on node (\S+) \(cpu\) died in epoch ([0-9]+))"};
  std::smatch match;
  CLUSTER_REQUIRE(std::regex_search(err, match, died), &coordinator);
  CHECK(match[1].str() == b.address);
  const int lost_in = std::stoi(match[2]);
  CHECK(lost_in >= 2);
  CHECK(lost_in <= 4);
  const auto records = read_metrics(metrics);
  const auto epochs = records_of(records, "epoch");
  const auto final_records = records_of(records, "final");
  INFO(coordinator.describe());
  REQUIRE(epochs.size() == 4);
  REQUIRE(final_records.size() == 1);
  for (size_t i = 0; i < epochs.size(); ++i) {
    INFO("epoch " << i + 1 << ": " << epochs[i].dump());
    // The dead replica's unprocessed share went to the survivor: nothing lost.
    CHECK(epochs[i]["samples"] == 2000);
    CHECK(epochs[i]["live_replicas"] == (static_cast<int>(i) + 1 < lost_in ? 2 : 1));
  }
  CHECK(final_records[0]["live_replicas"] == 1);
  CHECK(final_records[0]["replicas"] == 2);
  CHECK(final_records[0]["test_accuracy"].get<double>() > 0.6);
  CLUSTER_CHECK(a.proc->running(), a.proc.get());
  CHECK(seconds_since(start) < 90);
}

TEST_CASE("a node killed mid-run with on-replica-loss abort fails the run within seconds "
          "naming the node and the replica",
          "[cluster][failure][kill]") {
  const auto start = clock_type::now();
  temp_dir dir{"troupe-cluster"};
  auto a = start_node(dir, "node-a");
  auto b = start_node(dir, "node-b");
  process coordinator{long_run(a, b, "abort", dir.file("metrics.jsonl")), dir.path(),
                      "coordinator"};
  wait_until_mid_run(coordinator);
  b.proc->send(SIGKILL);
  expect_failed_within_seconds(coordinator, 5);
  const auto err = coordinator.err();
  CLUSTER_CHECK(err.find("error: ") != std::string::npos, &coordinator);
  CLUSTER_CHECK(err.find("replica 1 on node " + b.address) != std::string::npos, &coordinator);
  CLUSTER_CHECK(err.find("on-replica-loss=abort") != std::string::npos, &coordinator);
  // The surviving node lets its replica go and stays up for the next job.
  CLUSTER_CHECK(a.proc->wait_for_line(stream::err, "replica 0 stopped", notice_timeout),
                a.proc.get());
  CLUSTER_CHECK(a.proc->running(), a.proc.get());
  CHECK(seconds_since(start) < 60);
}

TEST_CASE("a frozen node is detected by heartbeats and aborts the run naming the node",
          "[cluster][failure][freeze]") {
  const auto start = clock_type::now();
  temp_dir dir{"troupe-cluster"};
  auto a = start_node(dir, "node-a");
  auto b = start_node(dir, "node-b");
  process coordinator{long_run(a, b, "abort", dir.file("metrics.jsonl")), dir.path(),
                      "coordinator"};
  wait_until_mid_run(coordinator);
  const auto frozen_at = clock_type::now();
  b.proc->send(SIGSTOP);
  const auto status = coordinator.wait(exit_timeout);
  const auto detected_after = seconds_since(frozen_at);
  b.proc->send(SIGCONT);
  INFO(to_string(status) << "; " << detected_after << " s after SIGSTOP");
  CLUSTER_REQUIRE(!status.timed_out, &coordinator);
  CLUSTER_REQUIRE(status.exited, &coordinator);
  CLUSTER_CHECK(status.code == 1, &coordinator);
  CHECK(detected_after < 10); // 200 ms heartbeats, 1 s timeout: ~1.1 s expected
  const auto err = coordinator.err();
  CLUSTER_CHECK(err.find("replica 1 on node " + b.address) != std::string::npos, &coordinator);
  // Thawed, the node finds its coordinator gone and stops the replica; it
  // then stops cleanly.
  CLUSTER_CHECK(b.proc->wait_for_line(stream::err, "replica 1 stopped", notice_timeout),
                b.proc.get());
  b.proc->send(SIGTERM);
  const auto b_status = b.proc->wait(exit_timeout);
  INFO(to_string(b_status));
  CLUSTER_CHECK(b_status.exited, b.proc.get());
  CLUSTER_CHECK(b_status.code == 0, b.proc.get());
  CHECK(seconds_since(start) < 60);
}

TEST_CASE("a node outlives a coordinator killed mid-run and serves the next one",
          "[cluster][failure][coordinator]") {
  const auto start = clock_type::now();
  temp_dir dir{"troupe-cluster"};
  auto node = start_node(dir, "node");
  process coordinator{mnist_command({"--nodes=" + node.address, "--mode=sync", "--epochs=4",
                                     "--batch-size=4", "--seed=3"}),
                      dir.path(), "coordinator-1"};
  CLUSTER_REQUIRE(coordinator.wait_for_line(stream::out, "Epoch 1/4", line_timeout),
                  &coordinator);
  CLUSTER_REQUIRE(coordinator.running(), &coordinator);
  coordinator.send(SIGKILL);
  const auto killed = coordinator.wait(exit_timeout);
  CHECK(killed.signal == SIGKILL);
  // Its replica stops with the store it served; the node itself stays up.
  CLUSTER_CHECK(node.proc->wait_for_line(stream::err, "replica 0 stopped", notice_timeout),
                node.proc.get());
  CLUSTER_REQUIRE(node.proc->running(), node.proc.get());
  auto second = run_mnist(dir, "coordinator-2",
                          {"--nodes=" + node.address, "--mode=sync", "--epochs=1",
                           "--batch-size=32", "--seed=3"},
                          run_timeout);
  {
    INFO(second.description);
    CLUSTER_REQUIRE(second.status.exited, node.proc.get());
    CLUSTER_REQUIRE(second.status.code == 0, node.proc.get());
    const auto final_records = records_of(second.metrics, "final");
    REQUIRE(final_records.size() == 1);
    CHECK(final_records[0]["live_replicas"] == 1);
  }
  CLUSTER_CHECK(node.proc->running(), node.proc.get());
  const auto err = node.proc->err();
  size_t accepted = 0;
  for (size_t at = err.find("accepted coordinator"); at != std::string::npos;
       at = err.find("accepted coordinator", at + 1))
    ++accepted;
  CLUSTER_CHECK(accepted == 2, node.proc.get());
  CHECK(seconds_since(start) < 60);
}

TEST_CASE("store shards on a node stop when their coordinator is killed, and their "
          "replicas with them",
          "[cluster][failure][coordinator][shards]") {
  temp_dir dir{"troupe-cluster"};
  auto node = start_node(dir, "node");
  auto store = start_node(dir, "node-store");
  process coordinator{mnist_command({"--nodes=" + node.address, "--store-nodes=" + store.address,
                                     "--store-shards=2", "--mode=sync", "--epochs=20",
                                     "--batch-size=4", "--seed=3"}),
                      dir.path(), "coordinator"};
  CLUSTER_REQUIRE(coordinator.wait_for_line(stream::out, "Epoch 1/20", line_timeout),
                  &coordinator);
  coordinator.send(SIGKILL);
  const auto killed_at = clock_type::now();
  CHECK(coordinator.wait(exit_timeout).signal == SIGKILL);
  for (const std::string shard : {"0", "1"})
    CLUSTER_CHECK(store.proc->wait_for_line(stream::err,
                                            "variable store shard " + shard
                                              + " stopped: its coordinator is gone",
                                            notice_timeout),
                  store.proc.get());
  CLUSTER_CHECK(node.proc->wait_for_line(stream::err, "replica 0 stopped", notice_timeout),
                node.proc.get());
  CHECK(seconds_since(killed_at) < 10);
  CLUSTER_CHECK(store.proc->running(), store.proc.get());
}

TEST_CASE("a store node killed mid-run with checkpoints on ends the run within seconds naming "
          "the store, and keeps the checkpoint written before",
          "[cluster][failure][kill][shards][checkpoint]") {
  temp_dir dir{"troupe-cluster"};
  auto store = start_node(dir, "node-store");
  const auto checkpoint = dir.file("run.ckpt");
  process coordinator{mnist_command({"--store-node=" + store.address, "--replicas=2",
                                     "--mode=sync", "--epochs=20", "--batch-size=8",
                                     "--seed=3", "--checkpoint=" + checkpoint,
                                     "--checkpoint-every=50"}),
                      dir.path(), "coordinator"};
  CLUSTER_REQUIRE(coordinator.wait_for_line(stream::out, "Epoch 1/20", line_timeout),
                  &coordinator);
  store.proc->send(SIGKILL);
  // Nothing waits on a shard known dead: not the end of the run, not the
  // checkpoint writer's last question.
  expect_failed_within_seconds(coordinator, 5);
  // Named by the shard's own death, or by the replicas that lost it first.
  const auto err = coordinator.err();
  CLUSTER_CHECK(err.find("error: the variable store (shard 0") != std::string::npos, &coordinator);
  CLUSTER_CHECK(err.find("on node " + store.address + ") died") != std::string::npos,
                &coordinator);
  CHECK(std::filesystem::exists(checkpoint)); // the end of epoch 1's, at least
}

TEST_CASE("a coordinator pointed at a port where nothing listens fails quickly saying it "
          "cannot reach the node",
          "[cluster][failure][connect]") {
  temp_dir dir{"troupe-cluster"};
  refused_port nobody;
  const auto address = "127.0.0.1:" + std::to_string(nobody.port());
  auto run = run_mnist(dir, "coordinator", {"--nodes=" + address, "--epochs=1"}, exit_timeout);
  INFO(run.description);
  REQUIRE(run.status.exited);
  CHECK(run.status.code == 1);
  CHECK(run.status.seconds < 5);
  CHECK(run.err.find("cannot reach node " + address) != std::string::npos);
  CHECK(records_of(run.metrics, "final").empty());
}
