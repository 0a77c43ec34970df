// mnist --validation-split trains on the data's first rows and validates on
// the rest: the same bits here and on two nodes (which take the first rows
// of their own copy), other bits than the whole set, and the extra metrics
// in the epoch line and the metrics records.
#include "tests/cluster/cluster_test.hpp"

#include "tests/cluster/respawn_runs.hpp"

using namespace troupe::cluster_test;
using troupe::respawn_runs::final_checksum;

TEST_CASE("mnist --validation-split trains on the same rows here and on two nodes, and "
          "--extra-metrics reports its metrics",
          "[cluster][validation_split]") {
  temp_dir dir{"troupe-cluster"};
  const std::vector<std::string> split{"--epochs=1", "--replicas=2", "--validation-split=0.2",
                                       "--extra-metrics=top_3_accuracy"};
  auto here = run_mnist(dir, "here", split, run_timeout);
  INFO(here.description);
  REQUIRE(here.status.exited);
  REQUIRE(here.status.code == 0);
  CHECK(here.out.find("test_top_3_accuracy: ") != std::string::npos);
  const auto epochs = troupe::respawn_runs::records_of(here.metrics, "epoch");
  REQUIRE(epochs.size() == 1);
  CHECK(epochs[0].value("test_top_3_accuracy", 0.0) > epochs[0].value("test_accuracy", 1.0));
  auto a = start_node(dir, "node-a");
  auto b = start_node(dir, "node-b");
  auto on_nodes_args = split;
  on_nodes_args.push_back("--nodes=" + a.address + "," + b.address);
  auto on_nodes = run_mnist(dir, "on-nodes", on_nodes_args, run_timeout);
  INFO(on_nodes.description);
  REQUIRE(on_nodes.status.code == 0);
  CHECK(final_checksum(on_nodes.metrics) == final_checksum(here.metrics));
  auto whole = run_mnist(dir, "whole", {"--epochs=1", "--replicas=2"}, run_timeout);
  REQUIRE(whole.status.code == 0);
  CHECK(final_checksum(whole.metrics) != final_checksum(here.metrics));
  const auto whole_epochs = troupe::respawn_runs::records_of(whole.metrics, "epoch");
  REQUIRE(whole_epochs.size() == 1);
  const uint64_t all = whole_epochs[0].value("samples", uint64_t{0});
  CHECK(epochs[0].value("samples", uint64_t{0}) == all * 4 / 5); // floor(n * 0.8), n = 2000
  auto bad = run_mnist(dir, "bad", {"--epochs=1", "--extra-metrics=mae"}, run_timeout);
  CHECK(bad.status.code == 2);
  CHECK(bad.err.find("--extra-metrics=mae") != std::string::npos);
}
