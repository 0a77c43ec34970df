// Node processes of one host send pushes and answers through shared-memory
// lanes: they open them, and a sync run keeps the bits of one process and
// of nodes that take no lanes, for fp32 and int8 (whose pushes carry a
// residual after a checkpoint's cut); a coordinator that keeps the store
// takes lanes from the replica nodes too.
#include "tests/cluster/cluster_test.hpp"

using namespace troupe::cluster_test;

namespace {

const std::string lane_open = "a shared-memory lane to another process of this host is open";

} // namespace

TEST_CASE("two nodes of one host open lanes, and a sync run through them has the bits of one "
          "process and of nodes without lanes",
          "[cluster][sync][lanes][bits]") {
  temp_dir dir{"troupe-cluster"};
  auto a = start_node(dir, "node-a");
  auto b = start_node(dir, "node-b");
  auto c = start_node(dir, "node-c", {"--no-host-lanes"});
  auto d = start_node(dir, "node-d", {"--no-host-lanes"});
  for (const std::string wire : {"fp32", "int8"}) {
    INFO(wire);
    const std::vector<std::string> settings{"--wire=" + wire, "--checkpoint-every=7",
                                            "--replicas-per-node=1"};
    auto run = [&](const std::string& name, std::vector<std::string> more) {
      more.insert(more.end(), settings.begin(), settings.end());
      more.push_back("--checkpoint=" + dir.file(name + ".ck"));
      return checksum_of_run(dir, name, codec_run(more));
    };
    const auto here = run(wire + "-here", {"--replicas=2"});
    const auto lanes = run(wire + "-lanes", {"--nodes=" + a.address + "," + b.address});
    const auto no_lanes = run(wire + "-no-lanes", {"--nodes=" + c.address + "," + d.address});
    CHECK(lanes == here);
    CHECK(no_lanes == here);
  }
  for (auto* node : {&a, &b})
    CLUSTER_CHECK(node->proc->err().find(lane_open) != std::string::npos, node->proc.get());
  for (auto* node : {&c, &d})
    CLUSTER_CHECK(node->proc->err().find(lane_open) == std::string::npos, node->proc.get());
}

TEST_CASE("a coordinator whose store is its own takes lanes from replica nodes of its host, "
          "and the run keeps the bits of one process",
          "[cluster][sync][lanes][bits]") {
  temp_dir dir{"troupe-cluster"};
  auto a = start_node(dir, "node-a");
  auto b = start_node(dir, "node-b");
  const auto here = checksum_of_run(dir, "here", codec_run({"--replicas=2"}));
  const auto run = run_to_success(dir, "store-here",
                                  codec_run({"--nodes=" + a.address + "," + b.address,
                                             "--store-nodes=here", "--replicas-per-node=1"}));
  CHECK(final_record_of(run)["params_fnv1a64"].get<std::string>() == here);
  CHECK(run.err.find(lane_open) != std::string::npos);
  for (auto* node : {&a, &b})
    CLUSTER_CHECK(node->proc->err().find(lane_open) != std::string::npos, node->proc.get());
}
