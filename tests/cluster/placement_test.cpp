// Placement independence and async training across node processes: the same
// seed gives the same parameters bit for bit whether the replicas run in the
// coordinator or on two nodes; async training on nodes learns.
#include "model/backend/backend.hpp"
#include "tests/cluster/cluster_test.hpp"

using namespace troupe::cluster_test;

namespace {

// Runs sync training with `nodes` x `per_node` replicas on node processes and
// the same number locally, and returns both final records.
std::pair<nlohmann::json, nlohmann::json> train_both_ways(size_t per_node) {
  temp_dir dir{"troupe-cluster"};
  auto a = start_node(dir, "node-a");
  auto b = start_node(dir, "node-b");
  const std::vector<std::string> common{"--mode=sync", "--epochs=2", "--batch-size=32",
                                        "--seed=1234"};
  auto distributed_args = common;
  distributed_args.push_back("--nodes=" + a.address + "," + b.address);
  distributed_args.push_back("--replicas-per-node=" + std::to_string(per_node));
  auto distributed = run_mnist(dir, "coordinator", distributed_args, run_timeout);
  auto local_args = common;
  local_args.push_back("--replicas=" + std::to_string(2 * per_node));
  auto local = run_mnist(dir, "local", local_args, run_timeout);
  {
    INFO(distributed.description << "\n" << local.description);
    REQUIRE(distributed.status.exited);
    REQUIRE(distributed.status.code == 0);
    REQUIRE(local.status.exited);
    REQUIRE(local.status.code == 0);
  }
  // The replicas really ran on the nodes: each node started its share.
  for (size_t i = 0; i < 2 * per_node; ++i) {
    auto& node = i < per_node ? a : b;
    const auto started = "replica " + std::to_string(i) + " of "
                         + std::to_string(2 * per_node) + " on cpu started";
    CLUSTER_CHECK(node.proc->wait_for_line(stream::err, started, notice_timeout),
                  node.proc.get());
  }
  auto distributed_final = records_of(distributed.metrics, "final");
  auto local_final = records_of(local.metrics, "final");
  INFO(distributed.description << "\n" << local.description);
  REQUIRE(distributed_final.size() == 1);
  REQUIRE(local_final.size() == 1);
  CHECK(records_of(distributed.metrics, "epoch").size() == 2);
  CHECK(distributed_final[0]["replicas"] == 2 * per_node);
  CHECK(distributed_final[0]["live_replicas"] == 2 * per_node);
  return {distributed_final[0], local_final[0]};
}

// Trains with `remote_args` (nodes) and with `local_args` (one process) and
// checks that both exit 0 with the same final checksum.
void expect_same_bits(const temp_dir& dir, const std::vector<std::string>& remote_args,
                      const std::vector<std::string>& local_args) {
  auto remote = run_mnist(dir, "coordinator", remote_args, run_timeout);
  auto local = run_mnist(dir, "local", local_args, run_timeout);
  INFO(remote.description << "\n" << local.description);
  REQUIRE(remote.status.exited);
  REQUIRE(remote.status.code == 0);
  REQUIRE(local.status.exited);
  REQUIRE(local.status.code == 0);
  const auto remote_final = records_of(remote.metrics, "final");
  const auto local_final = records_of(local.metrics, "final");
  REQUIRE(remote_final.size() == 1);
  REQUIRE(local_final.size() == 1);
  CHECK(remote_final[0]["params_fnv1a64"].get<std::string>()
        == local_final[0]["params_fnv1a64"].get<std::string>());
}

} // namespace

TEST_CASE("sync training on two nodes with one replica each matches a local run of two "
          "replicas bit for bit",
          "[cluster][sync][placement]") {
  const auto start = clock_type::now();
  auto [distributed, local] = train_both_ways(1);
  CHECK(distributed["params_fnv1a64"].get<std::string>()
        == local["params_fnv1a64"].get<std::string>());
  CHECK(distributed["version"] == local["version"]);
  CHECK(distributed["test_accuracy"] == local["test_accuracy"]);
  CHECK(seconds_since(start) < 60);
}

TEST_CASE("sync training on two nodes with two replicas each matches a local run of four "
          "replicas bit for bit",
          "[cluster][sync][placement]") {
  const auto start = clock_type::now();
  auto [distributed, local] = train_both_ways(2);
  CHECK(distributed["params_fnv1a64"].get<std::string>()
        == local["params_fnv1a64"].get<std::string>());
  CHECK(distributed["version"] == local["version"]);
  CHECK(distributed["test_accuracy"] == local["test_accuracy"]);
  CHECK(seconds_since(start) < 60);
}

TEST_CASE("async training across two nodes learns well above chance", "[cluster][async]") {
  const auto start = clock_type::now();
  temp_dir dir{"troupe-cluster"};
  auto a = start_node(dir, "node-a");
  auto b = start_node(dir, "node-b");
  auto run = run_mnist(dir, "coordinator",
                       {"--nodes=" + a.address + "," + b.address, "--replicas-per-node=1",
                        "--mode=async", "--epochs=3", "--batch-size=32", "--seed=5"},
                       run_timeout);
  INFO(run.description);
  REQUIRE(run.status.exited);
  REQUIRE(run.status.code == 0);
  const auto epochs = records_of(run.metrics, "epoch");
  const auto final_records = records_of(run.metrics, "final");
  REQUIRE(epochs.size() == 3);
  REQUIRE(final_records.size() == 1);
  for (const auto& epoch : epochs) {
    CHECK(epoch["mode"] == "async");
    CHECK(epoch["samples"] == 2000);
    CHECK(epoch["live_replicas"] == 2);
  }
  const auto accuracy = final_records[0]["test_accuracy"].get<double>();
  CHECK(accuracy > 0.6); // 10 classes: chance is 0.1; ~0.8 is typical here
  CHECK(accuracy <= 1.0);
  CHECK(final_records[0]["samples_per_second"].get<double>() > 0);
  CLUSTER_CHECK(a.proc->wait_for_line(stream::err, "replica 0 of 2 on cpu started",
                                      notice_timeout),
                a.proc.get());
  CLUSTER_CHECK(b.proc->wait_for_line(stream::err, "replica 1 of 2 on cpu started",
                                      notice_timeout),
                b.proc.get());
  CHECK(seconds_since(start) < 60);
}

TEST_CASE("sync training with the store on a third node matches a local run bit for bit",
          "[cluster][sync][placement][store]") {
  const auto start = clock_type::now();
  temp_dir dir{"troupe-cluster"};
  auto a = start_node(dir, "node-a");
  auto b = start_node(dir, "node-b");
  auto s = start_node(dir, "node-store");
  const std::vector<std::string> common{"--mode=sync", "--epochs=2", "--batch-size=32",
                                        "--seed=77"};
  auto remote_args = common;
  remote_args.push_back("--nodes=" + a.address + "," + b.address);
  remote_args.push_back("--store-node=" + s.address);
  auto local_args = common;
  local_args.push_back("--replicas=2");
  expect_same_bits(dir, remote_args, local_args);
  CLUSTER_CHECK(s.proc->wait_for_line(stream::err,
                                      "variable store shard 0 of 1 (sync, adam) started",
                                      notice_timeout),
                s.proc.get());
  CHECK(seconds_since(start) < 60);
}

TEST_CASE("sync training with 3 store shards on two store nodes matches a local run with "
          "one shard bit for bit",
          "[cluster][sync][placement][store][shards]") {
  const auto start = clock_type::now();
  temp_dir dir{"troupe-cluster"};
  auto a = start_node(dir, "node-a");
  auto b = start_node(dir, "node-b");
  auto s1 = start_node(dir, "node-store-1");
  auto s2 = start_node(dir, "node-store-2");
  const std::vector<std::string> common{"--mode=sync", "--epochs=2", "--batch-size=32",
                                        "--seed=78"};
  auto remote_args = common;
  remote_args.push_back("--nodes=" + a.address + "," + b.address);
  remote_args.push_back("--store-nodes=" + s1.address + "," + s2.address);
  remote_args.push_back("--store-shards=3");
  auto local_args = common;
  local_args.push_back("--replicas=2");
  local_args.push_back("--store-shards=1");
  expect_same_bits(dir, remote_args, local_args);
  // Shards 0 and 2 on the first store node, shard 1 on the second.
  CLUSTER_CHECK(s1.proc->wait_for_line(stream::err, "variable store shard 0 of 3",
                                       notice_timeout),
                s1.proc.get());
  CLUSTER_CHECK(s1.proc->wait_for_line(stream::err, "variable store shard 2 of 3",
                                       notice_timeout),
                s1.proc.get());
  CLUSTER_CHECK(s2.proc->wait_for_line(stream::err, "variable store shard 1 of 3",
                                       notice_timeout),
                s2.proc.get());
  CHECK(seconds_since(start) < 90);
}

TEST_CASE("delayed training over two nodes matches a local run bit for bit",
          "[cluster][delayed][placement]") {
  temp_dir dir{"troupe-cluster"};
  auto a = start_node(dir, "node-a");
  auto b = start_node(dir, "node-b");
  const std::vector<std::string> common{"--mode=delayed", "--staleness=1", "--epochs=2",
                                        "--batch-size=32", "--seed=79"};
  auto remote_args = common;
  remote_args.push_back("--nodes=" + a.address + "," + b.address);
  auto local_args = common;
  local_args.push_back("--replicas=2");
  expect_same_bits(dir, remote_args, local_args);
}

TEST_CASE("ssp and sync with a backup replica train across two nodes",
          "[cluster][ssp][backup][placement]") {
  temp_dir dir{"troupe-cluster"};
  auto a = start_node(dir, "node-a");
  auto b = start_node(dir, "node-b", {"--slow-replica=3:4"});
  for (const std::string dial : {"--mode=ssp --staleness=2", "--mode=sync --backup-replicas=1"}) {
    std::vector<std::string> args{"--nodes=" + a.address + "," + b.address,
                                  "--replicas-per-node=2", "--epochs=2", "--batch-size=32"};
    args.push_back(dial.substr(0, dial.find(' ')));
    args.push_back(dial.substr(dial.find(' ') + 1));
    auto run = run_mnist(dir, "coordinator", args, run_timeout);
    INFO(dial << "\n" << run.description);
    REQUIRE(run.status.exited);
    REQUIRE(run.status.code == 0);
    const auto final = records_of(run.metrics, "final");
    REQUIRE(final.size() == 1);
    CHECK(final[0]["test_accuracy"].get<double>() > 0.6);
    CHECK(final[0]["straggler"] == 3);
    const auto epochs = records_of(run.metrics, "epoch");
    REQUIRE(epochs.size() == 2);
    if (dial.find("backup") != std::string::npos)
      CHECK(epochs[0]["dropped"].get<uint64_t>() > 0);
    else
      CHECK(epochs[0]["staleness_max"].get<uint64_t>() > 0);
  }
}

TEST_CASE("a node's --slow-replica slows its replica, and the coordinator's report names it",
          "[cluster][straggler]") {
  temp_dir dir{"troupe-cluster"};
  auto a = start_node(dir, "node-a", {"--slow-replica=0:10"});
  auto b = start_node(dir, "node-b");
  const auto final = final_record_of(run_to_success(
    dir, "coordinator",
    {"--nodes=" + a.address + "," + b.address, "--epochs=1", "--batch-size=16"}));
  CHECK(final["straggler"] == 0);
  CHECK(final["replica_pace"][0]["compute_ms_per_sample"].get<double>()
        > 1.5 * final["replica_pace"][1]["compute_ms_per_sample"].get<double>());
}

TEST_CASE("with --on-replica-loss=abort, killing one store shard's node ends the run with "
          "an error naming the shard and its node",
          "[cluster][failure][store][shards]") {
  temp_dir dir{"troupe-cluster"};
  auto a = start_node(dir, "node-a");
  auto other = start_node(dir, "node-store-0");
  auto s = start_node(dir, "node-store-1");
  process coordinator{mnist_command({"--nodes=" + a.address,
                                     "--store-nodes=" + other.address + "," + s.address,
                                     "--on-replica-loss=abort", "--epochs=20",
                                     "--batch-size=4"}),
                      dir.path(), "coordinator"};
  CLUSTER_REQUIRE(coordinator.wait_for_line(stream::out, "Epoch 1/20", line_timeout),
                  &coordinator);
  const auto killed_at = clock_type::now();
  s.proc->send(SIGKILL);
  const auto status = coordinator.wait(exit_timeout);
  INFO(to_string(status));
  CLUSTER_REQUIRE(status.exited, &coordinator);
  CLUSTER_CHECK(status.code == 1, &coordinator);
  CHECK(seconds_since(killed_at) < 10);
  // Named by the coordinator's own monitor, or by the replica that noticed first.
  const auto err = coordinator.err();
  CLUSTER_CHECK(err.find("variable store (") != std::string::npos, &coordinator);
  CLUSTER_CHECK(err.find(s.address) != std::string::npos, &coordinator);
  CLUSTER_CHECK((err.find("shard 1 of 2 on node " + s.address) != std::string::npos
                 || err.find("store shard 1 of 2 is gone") != std::string::npos),
                &coordinator);
  // The replica's node notices too and drops the job's replica.
  CLUSTER_CHECK(a.proc->wait_for_line(stream::err, "replica 0 stopped", notice_timeout),
                a.proc.get());
}

TEST_CASE("a store node that cannot open the store device logs why, and the run ends "
          "with an error naming the shard",
          "[cluster][failure][store][device-store]") {
  if (troupe::make_backend("cuda:0")) {
    WARN("troupe-test-skipped: cuda:0 opens on this machine, so the store shard starts");
    return;
  }
  temp_dir dir{"troupe-cluster"};
  auto a = start_node(dir, "node-a");
  auto s = start_node(dir, "node-store");
  process coordinator{mnist_command({"--nodes=" + a.address, "--store-nodes=" + s.address,
                                     "--store-device=cuda:0", "--epochs=1"}),
                      dir.path(), "coordinator"};
  const auto status = coordinator.wait(exit_timeout);
  INFO(to_string(status));
  CLUSTER_REQUIRE(status.exited, &coordinator);
  CLUSTER_CHECK(status.code != 0, &coordinator);
  CLUSTER_CHECK(s.proc->wait_for_line(stream::err,
                                      "variable store shard 0 of 1 cannot start: store shard 0 "
                                      "on cuda:0: ",
                                      notice_timeout),
                s.proc.get());
  CLUSTER_CHECK(coordinator.err().find("cannot start store shard 0 on node " + s.address
                                        + ": store shard 0 on cuda:0: ")
                  != std::string::npos,
                &coordinator);
}
