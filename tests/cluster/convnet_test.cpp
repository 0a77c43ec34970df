// A convolutional network with dropout trains in sync mode with the same bits
// for 1 and 3 store shards and on two node processes: dropout's draws follow
// the sample and the step, not the replica or process that computes it.
#include "tests/cluster/cluster_test.hpp"

using namespace troupe::cluster_test;

TEST_CASE("a sync convnet with dropout has the same bits for 1 and 3 store shards and on "
          "two nodes",
          "[cluster][sync][convnet][bits]") {
  temp_dir dir{"troupe-cluster"};
  const std::string convnet = "28x28x1-conv4k3relu-maxpool2-conv8k3relu-maxpool2-flatten-";
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
