// mnist --start-from=FILE fine-tunes a saved model: the same bits here and on
// two nodes, other bits than a fresh start, and a refusal beside --resume.
#include "tests/cluster/cluster_test.hpp"

#include "tests/cluster/respawn_runs.hpp"

using namespace troupe::cluster_test;
using troupe::respawn_runs::final_checksum;

TEST_CASE("mnist --start-from fine-tunes a saved model with the same bits here and on two "
          "nodes",
          "[cluster][fine_tuning]") {
  temp_dir dir{"troupe-cluster"};
  const auto saved = dir.file("first.troupe");
  auto first = run_mnist(dir, "first", {"--epochs=2", "--save=" + saved}, run_timeout);
  INFO(first.description);
  REQUIRE(first.status.exited);
  REQUIRE(first.status.code == 0);
  const std::vector<std::string> tune{"--epochs=1", "--replicas=2", "--start-from=" + saved};
  auto here = run_mnist(dir, "here", tune, run_timeout);
  INFO(here.description);
  REQUIRE(here.status.code == 0);
  CHECK(here.out.find("Fine-tuning: starts from the weights of " + saved) != std::string::npos);
  auto a = start_node(dir, "node-a");
  auto b = start_node(dir, "node-b");
  auto on_nodes_args = tune;
  on_nodes_args.push_back("--nodes=" + a.address + "," + b.address);
  auto on_nodes = run_mnist(dir, "on-nodes", on_nodes_args, run_timeout);
  INFO(on_nodes.description);
  REQUIRE(on_nodes.status.code == 0);
  CHECK(final_checksum(on_nodes.metrics) == final_checksum(here.metrics));
  auto fresh = run_mnist(dir, "fresh", {"--epochs=1", "--replicas=2"}, run_timeout);
  REQUIRE(fresh.status.code == 0);
  CHECK(final_checksum(fresh.metrics) != final_checksum(here.metrics));
  auto both = run_mnist(dir, "both", {"--epochs=1", "--start-from=" + saved,
                                      "--resume=" + dir.file("none.troupe")},
                        run_timeout);
  CHECK(both.status.code == 2);
  CHECK(both.err.find("--start-from and --resume") != std::string::npos);
}
