// --class-weights in real runs: every weight 1 keeps the bits of no weights,
// a weighed class changes them, and the weights cross the wire to replica
// nodes with sync's bits (options_test.cpp has the refused values).
#include "tests/cluster/cluster_test.hpp"

using namespace troupe::cluster_test;

TEST_CASE("a sync run with class weights has the same bits here and on two nodes, and every "
          "weight 1 has the bits of none",
          "[cluster][sync][class-weights][bits]") {
  const auto start = clock_type::now();
  temp_dir dir{"troupe-cluster"};
  const std::vector<std::string> common{"--mode=sync", "--epochs=1", "--batch-size=32",
                                        "--seed=23", "--devices=cpu"};
  auto with = [&common](std::vector<std::string> more) {
    more.insert(more.begin(), common.begin(), common.end());
    return more;
  };
  const auto plain = checksum_of_run(dir, "plain", with({"--replicas=2"}));
  const auto ones =
    checksum_of_run(dir, "ones", with({"--replicas=2", "--class-weights=0:1,9:1"}));
  CHECK(ones == plain);
  const std::string weights = "--class-weights=3:8,6:2.5,8:0";
  const auto here = checksum_of_run(dir, "here", with({"--replicas=2", weights}));
  CHECK(here != plain);
  auto a = start_node(dir, "node-a");
  auto b = start_node(dir, "node-b");
  const auto on_nodes = checksum_of_run(
    dir, "on-nodes",
    with({"--nodes=" + a.address + "," + b.address, "--replicas-per-node=1", weights}));
  CHECK(on_nodes == here);
  CHECK(seconds_since(start) < 120);
}
