// A store on nodes that heals: a store node killed (kill -9) or frozen
// mid-run loses its shard, the run rolls back to the newest snapshot kept in
// the coordinator, respawns the shard on a live store node and every
// replica, and the sync run ends with the bits of one process running as
// many replicas.
#include "tests/cluster/respawn_runs.hpp"

#include <regex>

using namespace troupe::cluster_test;
using namespace troupe::respawn_runs;

namespace {

// `nodes` host the replicas and, one shard each, the store.
std::vector<std::string> store_on(uint32_t replicas,
                                  const std::vector<const node_process*>& nodes,
                                  uint32_t per_node, std::vector<std::string> extra = {}) {
  std::string list;
  for (const auto* node : nodes)
    list += (list.empty() ? "" : ",") + node->address;
  extra.push_back("--store-nodes=" + list);
  extra.push_back("--store-shards=" + std::to_string(nodes.size()));
  return on_nodes(replicas, nodes, per_node, std::move(extra));
}

// Waits for a run that must end well, and returns its store_heal records.
std::vector<nlohmann::json> healed_run(const temp_dir& dir, process& coordinator) {
  const auto status = coordinator.wait(run_timeout);
  INFO(to_string(status));
  CLUSTER_REQUIRE(status.exited, &coordinator);
  CLUSTER_REQUIRE(status.code == 0, &coordinator);
  const auto metrics = read_metrics(dir.file("coordinator.jsonl"));
  CHECK(records_of(metrics, "epoch").size() == 4);
  const auto heals = records_of(metrics, "store_heal");
  CHECK(records_of(metrics, "final")[0]["store_heals"] == heals.size());
  return heals;
}

const std::regex healed{R"(; the store healed from the snapshot of round [0-9]+, )"
                        R"(shard [0-9]+ on (node \S+|this process))"
                        R"((, shard [0-9]+ on (node \S+|this process))*, in [0-9]+ ms)"};

} // namespace

TEST_CASE("a store node killed mid-run, shards on the replica nodes, is healed: its shard "
          "respawns on the next node, and the sync run ends with the bits of one process",
          "[cluster][failure][kill][heal]") {
  const bool mid_epoch = GENERATE(false, true);
  INFO((mid_epoch ? "killed mid-epoch" : "killed as an epoch ends"));
  const auto start = clock_type::now();
  temp_dir dir{"troupe-cluster"};
  auto a = start_node(dir, "node-a");
  auto b = start_node(dir, "node-b");
  auto c = start_node(dir, "node-c");
  auto coordinator = start_run(dir, store_on(6, {&a, &b, &c}, 2), mid_epoch);
  c.proc->send(SIGKILL);
  const auto heals = healed_run(dir, *coordinator);
  INFO(coordinator->describe());
  CHECK(count_of(coordinator->err(), healed) == 1);
  REQUIRE(heals.size() == 1);
  INFO(heals[0].dump());
  CHECK(heals[0]["shard"] == 2);
  CHECK(heals[0]["lost_on"] == "node " + c.address);
  CHECK(heals[0]["respawned_on"] == "node " + a.address); // the next live store node
  CHECK(heals[0]["milliseconds"].get<double>() < 1000);
  expect_local_bits(dir, 6, dir.file("coordinator.jsonl"));
  CHECK(seconds_since(start) < 120);
}

TEST_CASE("two of three store nodes killed at once leave every shard on the last one, and "
          "the run keeps the bits of one process",
          "[cluster][failure][kill][heal]") {
  temp_dir dir{"troupe-cluster"};
  auto a = start_node(dir, "node-a");
  auto b = start_node(dir, "node-b");
  auto c = start_node(dir, "node-c");
  auto coordinator = start_run(dir, store_on(3, {&a, &b, &c}, 1), true);
  b.proc->send(SIGKILL);
  c.proc->send(SIGKILL);
  const auto heals = healed_run(dir, *coordinator);
  INFO(coordinator->describe());
  REQUIRE_FALSE(heals.empty());
  for (const auto& heal : heals)
    CHECK(heal["respawned_on"] == "node " + a.address);
  expect_local_bits(dir, 3, dir.file("coordinator.jsonl"));
}

TEST_CASE("a store node frozen past the heartbeat timeout is healed, and once thawed its "
          "shard is fenced off: the run keeps the bits of one process",
          "[cluster][failure][freeze][heal]") {
  temp_dir dir{"troupe-cluster"};
  auto a = start_node(dir, "node-a");
  auto b = start_node(dir, "node-b");
  auto coordinator = start_run(dir, store_on(2, {&a, &b}, 1), true);
  b.proc->send(SIGSTOP);
  const auto heal = coordinator->wait_for_line(stream::err, "the store healed", line_timeout);
  b.proc->send(SIGCONT);
  CLUSTER_REQUIRE(heal.has_value(), coordinator.get());
  const auto heals = healed_run(dir, *coordinator);
  REQUIRE(heals.size() == 1);
  CHECK(heals[0]["shard"] == 1);
  CHECK(heals[0]["respawned_on"] == "node " + a.address);
  // Thawed, node b finds its link to the coordinator gone and stops the old
  // shard: nothing it computed late reaches a replica.
  CLUSTER_CHECK(b.proc->wait_for_line(stream::err, "variable store shard 1 stopped",
                                      notice_timeout),
                b.proc.get());
  expect_local_bits(dir, 2, dir.file("coordinator.jsonl"));
}

TEST_CASE("the death of the only store node ends the run saying no node can host its "
          "shard, or with --respawn=anywhere heals the store into the coordinator",
          "[cluster][failure][kill][heal]") {
  temp_dir dir{"troupe-cluster"};
  auto s = start_node(dir, "node-store");
  SECTION("nowhere to go") {
    auto coordinator =
      start_run(dir, run_args(2, {"--replicas=2", "--store-node=" + s.address}), true);
    s.proc->send(SIGKILL);
    const auto status = coordinator->wait(exit_timeout);
    INFO(to_string(status));
    CLUSTER_REQUIRE(!status.timed_out, coordinator.get());
    CLUSTER_CHECK(status.code == 1, coordinator.get());
    const auto err = coordinator->err();
    CLUSTER_CHECK(err.find("no live store node can host shard 0") != std::string::npos,
                  coordinator.get());
    CLUSTER_CHECK(err.find("--respawn=anywhere") != std::string::npos, coordinator.get());
    CHECK(status.seconds < 10);
  }
  SECTION("--respawn=anywhere") {
    auto coordinator = start_run(
      dir, run_args(2, {"--replicas=2", "--store-node=" + s.address, "--respawn=anywhere"}),
      true);
    s.proc->send(SIGKILL);
    const auto heals = healed_run(dir, *coordinator);
    REQUIRE(heals.size() == 1);
    CHECK(heals[0]["respawned_on"] == "this process");
    expect_local_bits(dir, 2, dir.file("coordinator.jsonl"));
  }
}

TEST_CASE("a healed shard too large for the frames a store node reads is not sent there, so "
          "the run ends at once naming both sizes, or with --respawn=anywhere heals here",
          "[cluster][failure][kill][heal][frames]") {
  // 784-128relu-10 sends 407,080 bytes of parameters, which node b reads;
  // a healed shard carries half of them and Adam's two planes of its state.
  const auto anywhere = GENERATE(false, true);
  INFO((anywhere ? "--respawn=anywhere" : "--respawn=nodes"));
  temp_dir dir{"troupe-cluster"};
  auto a = start_node(dir, "node-a");
  auto b = start_node(dir, "node-b", {"--max-frame-size=500000"});
  std::vector<std::string> extra{"--replicas=2",
                                 "--store-nodes=" + a.address + "," + b.address};
  if (anywhere)
    extra.push_back("--respawn=anywhere");
  auto coordinator = start_run(dir, run_args(2, extra), true);
  a.proc->send(SIGKILL);
  if (anywhere) {
    const auto heals = healed_run(dir, *coordinator);
    REQUIRE(heals.size() == 1);
    CHECK(heals[0]["respawned_on"] == "this process");
    CLUSTER_CHECK(coordinator->err().find("shard 1 on this process") != std::string::npos,
                  coordinator.get());
    expect_local_bits(dir, 2, dir.file("coordinator.jsonl"));
    return;
  }
  const auto status = coordinator->wait(exit_timeout);
  INFO(to_string(status));
  CLUSTER_REQUIRE(!status.timed_out, coordinator.get());
  CLUSTER_CHECK(status.code == 1, coordinator.get());
  const auto err = coordinator->err();
  CLUSTER_CHECK(err.find("no live store node can host shard 0 (node " + b.address
                         + ": the shard's spawn (its slices of the parameters and the optimizer "
                           "state) takes ")
                  != std::string::npos,
                coordinator.get());
  // Half the parameters and two planes of Adam's state, about 610 KB.
  const std::regex sizes{R"(takes 6[01][0-9]{4} bytes, over the node's --max-frame-size=500000\))"};
  CLUSTER_CHECK(count_of(err, sizes) == 1, coordinator.get());
  CHECK(status.seconds < 10); // far below the step timeout a closed connection would cost
}

TEST_CASE("a store with global_clipnorm whose node is killed mid-run heals, its new shards "
          "exchange their sums again, and the sync run ends with the bits of one process",
          "[cluster][failure][kill][heal][clipnorm]") {
  const auto start = clock_type::now();
  temp_dir dir{"troupe-cluster"};
  auto a = start_node(dir, "node-a");
  auto b = start_node(dir, "node-b");
  auto c = start_node(dir, "node-c");
  const std::string clip = "--global-clipnorm=0.5";
  auto coordinator = start_run(dir, store_on(3, {&a, &b, &c}, 1, {clip}), true);
  c.proc->send(SIGKILL);
  const auto heals = healed_run(dir, *coordinator);
  INFO(coordinator->describe());
  REQUIRE(heals.size() == 1);
  auto local = run_mnist(dir, "local", run_args(3, {"--replicas=3", clip}), run_timeout);
  INFO(local.description);
  REQUIRE(local.status.code == 0);
  expect_local_run(read_metrics(dir.file("coordinator.jsonl")), local.metrics);
  CHECK(seconds_since(start) < 120);
}
