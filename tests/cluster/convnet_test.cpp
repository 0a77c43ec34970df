// A convolutional network with dropout and batch normalization trains in
// sync mode with the same bits for 1 and 3 store shards, on two node
// processes and after a node killed mid-run: dropout's draws follow the
// sample and the step, not the replica or process that computes it, and the
// store averages the moving statistics in replica order whichever shard
// holds them.
#include "tests/cluster/cluster_test.hpp"

#include "tests/cluster/respawn_runs.hpp"

using namespace troupe::cluster_test;

TEST_CASE("a sync convnet with dropout and batch normalization has the same bits for 1 and 3 "
          "store shards and on two nodes",
          "[cluster][sync][convnet][bits]") {
  temp_dir dir{"troupe-cluster"};
  const std::string convnet = "28x28x1-conv4k3relu-maxpool2-conv8k3-batchnorm-relu-maxpool2-flatten-";
  const std::vector<std::string> common{"--mode=sync", "--epochs=1", "--batch-size=64",
                                        "--seed=11"};
  auto with = [&](std::vector<std::string> more, const std::string& dropout = "dropout0.5") {
    more.insert(more.begin(), common.begin(), common.end());
    more.push_back("--model=" + convnet + dropout + "-10");
    return more;
  };
  const auto one_shard = checksum_of_run(dir, "one-shard", with({"--replicas=2",
                                                                 "--store-shards=1"}));
  const auto three_shards = checksum_of_run(dir, "three-shards", with({"--replicas=2",
                                                                       "--store-shards=3"}));
  auto a = start_node(dir, "node-a");
  auto b = start_node(dir, "node-b");
  const auto on_nodes = checksum_of_run(
    dir, "on-nodes", with({"--nodes=" + a.address + "," + b.address, "--replicas-per-node=1"}));
  CHECK(three_shards == one_shard);
  CHECK(on_nodes == one_shard);
  // Dropout is part of the step: at rate 0 the bits differ.
  CHECK(checksum_of_run(dir, "no-dropout",
                        with({"--replicas=2", "--store-shards=1"}, "dropout0")) != one_shard);
}

TEST_CASE("a sync convnet with dropout and batch normalization whose node is killed mid-run "
          "respawns the replica and ends with the bits of one process",
          "[cluster][convnet][kill][respawn]") {
  using namespace troupe::respawn_runs;
  temp_dir dir{"troupe-cluster"};
  const std::string model =
    "--model=28x28x1-conv2k3relu-maxpool2-conv4k3-batchnorm-relu-maxpool2-flatten-dropout0.5-10";
  metrics_of_killed_node_run(dir, {model});
  expect_local_bits(dir, 2, dir.file("coordinator.jsonl"), {model});
}

TEST_CASE("a convnet with batch normalization trains in every mode: async, ssp, delayed and "
          "sync with a backup replica",
          "[cluster][convnet][batch_normalization][modes]") {
  temp_dir dir{"troupe-cluster"};
  const std::string model =
    "--model=28x28x1-conv4k3-batchnorm-relu-maxpool2-flatten-16-batchnorm-relu-10";
  const std::vector<std::vector<std::string>> modes{
    {"--mode=async"},
    {"--mode=ssp", "--staleness=2"},
    {"--mode=delayed", "--staleness=1"},
    {"--mode=sync", "--replicas=3", "--backup-replicas=1"}};
  for (const auto& mode : modes) {
    std::vector<std::string> args{"--epochs=2", "--batch-size=32", "--seed=4", "--replicas=2",
                                  model};
    args.insert(args.end(), mode.begin(), mode.end());
    auto run = run_mnist(dir, mode.front().substr(7), args, run_timeout);
    INFO(run.description);
    REQUIRE(run.status.code == 0);
    const auto epochs = records_of(run.metrics, "epoch");
    REQUIRE(epochs.size() == 2);
    CHECK(epochs[1]["loss"].get<double>() < epochs[0]["loss"].get<double>());
    CHECK(records_of(run.metrics, "final")[0]["test_accuracy"].get<double>() > 0.5);
  }
}

TEST_CASE("a convnet with batch normalization resumed from its checkpoint has the bits of the "
          "run never stopped: the moving statistics travel in it",
          "[cluster][convnet][batch_normalization][resume]") {
  temp_dir dir{"troupe-cluster"};
  const std::vector<std::string> common{
    "--mode=sync", "--batch-size=64", "--seed=9", "--replicas=2", "--store-shards=2",
    "--model=28x28x1-conv4k3-batchnorm-relu-maxpool2-flatten-dropout0.25-10"};
  auto with = [&](std::vector<std::string> more) {
    more.insert(more.begin(), common.begin(), common.end());
    return more;
  };
  const auto checkpoint = dir.file("first-epoch.troupe");
  const auto never_stopped = checksum_of_run(dir, "never-stopped", with({"--epochs=2"}));
  checksum_of_run(dir, "first-epoch", with({"--epochs=1", "--checkpoint=" + checkpoint}));
  CHECK(checksum_of_run(dir, "resumed", with({"--epochs=2", "--resume=" + checkpoint}))
        == never_stopped);
}
