// --wire=int8 is part of the run's math like bf16: a sync run has the same
// bits in one process with 1 and 3 store shards and on two node processes
// (slices cross between them as int8 with their blocks' scales), and differs
// from fp32's and bf16's. Residuals are replica state: a checkpoint at an
// epoch's end, mid-epoch or at a graceful stop keeps them and a resume from
// it keeps the bits, and so does the roll back to a snapshot that a lost
// shard or replica starts. Async with int8 trains.
#include "tests/cluster/cluster_test.hpp"

#include <chrono>
#include <csignal>
#include <thread>

#include "tests/cluster/respawn_runs.hpp"

using namespace troupe::cluster_test;

TEST_CASE("int8 sync runs have the same bits for 1 and 3 store shards and on two nodes, and "
          "neither fp32's nor bf16's",
          "[cluster][sync][wire][int8][bits]") {
  temp_dir dir{"troupe-cluster"};
  auto a = start_node(dir, "node-a");
  auto b = start_node(dir, "node-b");
  const auto fp32 = checksum_of_run(dir, "fp32", codec_run({"--replicas=2", "--store-shards=1"}));
  const auto bf16 =
    checksum_of_run(dir, "bf16", codec_run({"--wire=bf16", "--replicas=2", "--store-shards=1"}));
  const auto one_shard =
    checksum_of_run(dir, "one-shard", codec_run({"--wire=int8", "--replicas=2", "--store-shards=1"}));
  const auto three_shards = checksum_of_run(
    dir, "three-shards", codec_run({"--wire=int8", "--replicas=2", "--store-shards=3"}));
  // The store's three shards on the nodes too: slices that straddle blocks
  // cross between the two processes.
  const auto on_nodes = checksum_of_run(
    dir, "on-nodes", codec_run({"--wire=int8", "--nodes=" + a.address + "," + b.address,
                           "--replicas-per-node=1", "--store-shards=3"}));
  CHECK(three_shards == one_shard);
  CHECK(on_nodes == one_shard);
  CHECK(one_shard != fp32);
  CHECK(one_shard != bf16);
}

TEST_CASE("an int8 MLP learns as an fp32 one does in 2 epochs on the test slice, sync and async",
          "[cluster][wire][int8][accuracy]") {
  temp_dir dir{"troupe-cluster"};
  const std::vector<std::string> args{"--epochs=2", "--replicas=2", "--seed=5"};
  auto int8_args = args;
  int8_args.push_back("--wire=int8");
  auto async_args = args;
  async_args.push_back("--mode=async");
  auto async_int8_args = int8_args;
  async_int8_args.push_back("--mode=async");
  const double fp32 = final_test_accuracy(dir, "fp32", args);
  const double int8 = final_test_accuracy(dir, "int8", int8_args);
  // Async against async: its arrival order, not the codec, costs it a few
  // points against sync and spreads its runs by a few more.
  const double async = final_test_accuracy(dir, "async", async_args);
  const double async_int8 = final_test_accuracy(dir, "async-int8", async_int8_args);
  INFO("test accuracy: fp32 " << fp32 << ", int8 " << int8 << ", async fp32 " << async
                              << ", async int8 " << async_int8);
  CHECK(fp32 > 0.6);
  CHECK(int8 > fp32 - 0.03);
  CHECK(async > 0.6);
  CHECK(async_int8 > async - 0.05);
}

TEST_CASE("an async int8 run on two nodes trains", "[cluster][async][wire][int8]") {
  temp_dir dir{"troupe-cluster"};
  auto a = start_node(dir, "node-a");
  auto b = start_node(dir, "node-b");
  const auto record = final_record_of_run(
    dir, "async-nodes",
    {"--mode=async", "--epochs=2", "--batch-size=64", "--seed=5", "--wire=int8",
     "--nodes=" + a.address + "," + b.address, "--replicas-per-node=1", "--store-shards=2"});
  INFO("test accuracy " << test_accuracy_of(record));
  CHECK(test_accuracy_of(record) > 0.6);
}

TEST_CASE("an int8 run resumed from an epoch's checkpoint or a graceful stop's goes on with its "
          "replicas' residuals: the uninterrupted run's bits, here and on two nodes",
          "[cluster][sync][wire][int8][checkpoint]") {
  temp_dir dir{"troupe-cluster"};
  const std::vector<std::string> run{"--mode=sync", "--replicas=2", "--batch-size=64",
                                     "--seed=3", "--wire=int8"};
  auto with_run = [&](std::vector<std::string> more) {
    more.insert(more.begin(), run.begin(), run.end());
    return more;
  };
  const std::string file = dir.file("int8.ck");
  const auto whole = expect_resume_keeps_bits(dir, run, file);
  // The residuals travel to the replicas on nodes, in their epoch orders.
  auto a = start_node(dir, "node-a");
  auto b = start_node(dir, "node-b");
  const auto on_nodes = checksum_of_run(
    dir, "resumed-on-nodes",
    with_run({"--epochs=2", "--resume=" + file, "--nodes=" + a.address + "," + b.address,
              "--replicas-per-node=1"}));
  CHECK(on_nodes == whole);
  // A run stopped mid-epoch (SIGTERM) writes the open round's checkpoint
  // with each replica's residual from before its push of that round.
  const std::string stopped = dir.file("stopped.ck");
  const std::vector<std::string> slow{"--epochs=3", "--batch-size=8", "--slow-replica=0:100"};
  auto slow_with = [&](std::vector<std::string> more) {
    more.insert(more.begin(), slow.begin(), slow.end());
    return with_run(more);
  };
  const auto never_stopped = checksum_of_run(dir, "never-stopped", slow_with({}));
  process coordinator{mnist_command(slow_with({"--checkpoint=" + stopped})), dir.path(),
                      "stopped"};
  CLUSTER_REQUIRE(coordinator.wait_for_line(stream::out, "Epoch 1/3", line_timeout),
                  &coordinator);
  std::this_thread::sleep_for(std::chrono::milliseconds{300});
  coordinator.send(SIGTERM);
  const auto status = coordinator.wait(std::chrono::milliseconds{5000});
  CLUSTER_REQUIRE(status.exited, &coordinator);
  CLUSTER_REQUIRE(coordinator.err().find("in epoch 2 of 3") != std::string::npos, &coordinator);
  CHECK(checksum_of_run(dir, "resumed", slow_with({"--resume=" + stopped})) == never_stopped);
  // The codec is among the settings the checkpoint records.
  auto other = run_mnist(dir, "other-codec",
                         {"--mode=sync", "--replicas=2", "--batch-size=64", "--seed=3",
                          "--epochs=2", "--wire=bf16", "--resume=" + file},
                         run_timeout);
  INFO(other.description);
  CHECK(other.status.code != 0);
  CHECK_THAT(other.err, Catch::Contains("--wire=int8 there, bf16 here"));
}

TEST_CASE("an int8 sync run whose node is killed mid-epoch, shards on the nodes, heals from a "
          "snapshot that keeps every replica's residual: the bits of one process",
          "[cluster][wire][int8][kill][heal]") {
  using namespace troupe::respawn_runs;
  temp_dir dir{"troupe-cluster"};
  auto a = start_node(dir, "node-a");
  auto b = start_node(dir, "node-b");
  auto coordinator = start_run(dir, on_nodes(2, {&a, &b}, 1, {"--wire=int8"}), true);
  b.proc->send(SIGKILL);
  const auto status = coordinator->wait(run_timeout);
  INFO(to_string(status));
  CLUSTER_REQUIRE(status.exited, coordinator.get());
  CLUSTER_REQUIRE(status.code == 0, coordinator.get());
  const auto heals = records_of(read_metrics(dir.file("coordinator.jsonl")), "store_heal");
  REQUIRE(heals.size() == 1);
  // Rolled back into the epoch: the snapshot was cut mid-epoch.
  CHECK(heals[0]["round"].get<uint64_t>() % 1024 != 0);
  expect_local_bits(dir, 2, dir.file("coordinator.jsonl"), {"--wire=int8"});
}

TEST_CASE("an int8 sync run whose node is killed mid-run, store in the coordinator, rolls back "
          "to the snapshot that keeps every replica's residual: the bits of one process",
          "[cluster][wire][int8][kill][respawn]") {
  using namespace troupe::respawn_runs;
  temp_dir dir{"troupe-cluster"};
  const auto metrics = metrics_of_killed_node_run(dir, {"--wire=int8"});
  const auto respawns = records_of(metrics, "respawn");
  REQUIRE(respawns.size() == 1);
  CHECK(records_of(metrics, "store_heal").empty());
  CHECK(records_of(metrics, "final")[0]["respawns"] == 1);
  expect_local_bits(dir, 2, dir.file("coordinator.jsonl"), {"--wire=int8"});
}

TEST_CASE("an int8 replica moved onto a node that joins mid-run hands its residual to its new "
          "actor: the bits of one process",
          "[cluster][wire][int8][join]") {
  using namespace troupe::respawn_runs;
  temp_dir dir{"troupe-cluster"};
  auto a = start_node(dir, "node-a");
  const auto joins = free_join_door();
  auto coordinator =
    start_run(dir, replicas_on(2, {&a}, 2, {"--accept-joins=" + joins, "--wire=int8"}), false);
  auto b = join_run(dir, "node-b", joins, 0);
  const auto status = coordinator->wait(run_timeout);
  INFO(to_string(status));
  CLUSTER_REQUIRE(status.exited, coordinator.get());
  CLUSTER_REQUIRE(status.code == 0, coordinator.get());
  CLUSTER_CHECK(coordinator->err().find("moves without its int8 residual") == std::string::npos,
                coordinator.get());
  const auto metrics = read_metrics(dir.file("coordinator.jsonl"));
  REQUIRE(records_of(metrics, "move").size() == 1);
  expect_local_bits(dir, 2, dir.file("coordinator.jsonl"), {"--wire=int8"});
}

TEST_CASE("an int8 roll back whose lost replica has no place waits for a node to join, which "
          "takes it: the bits of one process",
          "[cluster][wire][int8][kill][join]") {
  using namespace troupe::respawn_runs;
  temp_dir dir{"troupe-cluster"};
  auto a = start_node(dir, "node-a");
  auto b = start_node(dir, "node-b");
  const auto joins = free_join_door();
  // One replica a node at most: with b dead, replica 1 has nowhere to go
  // until c joins.
  auto coordinator = start_run(
    dir,
    replicas_on(2, {&a, &b}, 1,
                {"--wire=int8", "--max-replicas-per-node=1", "--accept-joins=" + joins,
                 "--respawn-timeout=20000"}),
    true);
  b.proc->send(SIGKILL);
  CLUSTER_REQUIRE(coordinator->wait_for_line(stream::err, "ms for a node to join", line_timeout),
                  coordinator.get());
  auto c = join_run(dir, "node-c", joins, 1);
  const auto status = coordinator->wait(run_timeout);
  INFO(to_string(status));
  CLUSTER_REQUIRE(status.exited, coordinator.get());
  CLUSTER_REQUIRE(status.code == 0, coordinator.get());
  const auto metrics = read_metrics(dir.file("coordinator.jsonl"));
  const auto respawns = records_of(metrics, "respawn");
  REQUIRE(respawns.size() == 1);
  CHECK(respawns[0]["respawned_on"] == "node " + c.address + " (cpu)");
  expect_local_bits(dir, 2, dir.file("coordinator.jsonl"), {"--wire=int8"});
}
