// Respawns under async, ssp and delayed across processes: a node killed (kill -9)
// mid-epoch loses its replicas (and, with the store on the nodes, its
// shard), they go on from their next push on the nodes left, and every
// sample of each epoch is trained exactly once: as many steps as one
// process with as many replicas, each epoch's samples the training set.
#include "tests/cluster/respawn_runs.hpp"

#include <regex>

using namespace troupe::cluster_test;
using namespace troupe::respawn_runs;

namespace {

// `args` with --mode=MODE (and for ssp and delayed a staleness of 2) in
// place of sync.
std::vector<std::string> in_mode(std::vector<std::string> args, const std::string& mode) {
  for (auto& arg : args)
    if (arg == "--mode=sync")
      arg = "--mode=" + mode;
  if (mode != "async")
    args.push_back("--staleness=2");
  return args;
}

// Checks that every epoch trained each sample once (as many samples and
// pushes as one process with `replicas` replicas in `mode`) and that the
// run took as many steps.
void expect_each_sample_once(const temp_dir& dir, uint32_t replicas, const std::string& mode) {
  const auto remote = read_metrics(dir.file("coordinator.jsonl"));
  auto local = run_mnist(
    dir, "local", in_mode(run_args(replicas, {"--replicas=" + std::to_string(replicas)}), mode),
    run_timeout);
  INFO(local.description);
  REQUIRE(local.status.code == 0);
  REQUIRE(records_of(remote, "epoch").size() == 4);
  expect_same_epoch_counts(remote, local.metrics);
  CHECK(records_of(remote, "final")[0]["version"] == records_of(local.metrics, "final")[0]["version"]);
}

} // namespace

TEST_CASE("under async, ssp and delayed a node killed mid-epoch has its replicas go on from their "
          "next push on the nodes left, and every sample of each epoch is trained once",
          "[cluster][failure][kill][respawn][async]") {
  const std::string mode = GENERATE("async", "ssp", "delayed");
  const bool store_on_nodes = GENERATE(false, true);
  INFO(mode << (store_on_nodes ? ", shards on the nodes" : ", store in the coordinator"));
  temp_dir dir{"troupe-cluster"};
  auto a = start_node(dir, "node-a");
  auto b = start_node(dir, "node-b");
  auto c = start_node(dir, "node-c");
  auto args = store_on_nodes ? on_nodes(6, {&a, &b, &c}, 2) : replicas_on(6, {&a, &b, &c}, 2);
  auto coordinator = start_run(dir, in_mode(std::move(args), mode), true);
  c.proc->send(SIGKILL);
  const auto status = coordinator->wait(run_timeout);
  INFO(to_string(status));
  CLUSTER_REQUIRE(status.exited, coordinator.get());
  CLUSTER_REQUIRE(status.code == 0, coordinator.get());
  INFO(coordinator->describe());
  const auto remote = read_metrics(dir.file("coordinator.jsonl"));
  const auto final_record = records_of(remote, "final").at(0);
  CHECK(final_record["live_replicas"] == 6);
  if (store_on_nodes) {
    // The shard on c went with it: the store healed from its newest
    // snapshot, and every replica started again from there.
    CHECK(final_record["store_heals"] == 1);
  } else {
    const std::regex respawned{"replica [45] on node " + c.address
                               + R"( \(cpu\) died in epoch [0-9]+: [^\n]*; respawned on node )"};
    CHECK(count_of(coordinator->err(), respawned) == 2);
    CHECK(records_of(remote, "respawn").size() == 2);
  }
  expect_each_sample_once(dir, 6, mode);
}
