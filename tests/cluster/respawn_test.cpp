// Respawns across processes: a node killed (kill -9) mid-run loses its
// replicas, which respawn on the nodes left (or in the coordinator), and the
// sync run ends with the bits of one process running as many replicas.
#include "tests/cluster/respawn_runs.hpp"

#include <regex>

using namespace troupe::cluster_test;
using namespace troupe::respawn_runs;

TEST_CASE("a node killed mid-run has its replicas respawned on the nodes left, and the "
          "sync run ends with the bits of one process",
          "[cluster][failure][kill][respawn]") {
  const auto start = clock_type::now();
  temp_dir dir{"troupe-cluster"};
  auto a = start_node(dir, "node-a");
  auto b = start_node(dir, "node-b");
  auto c = start_node(dir, "node-c");
  auto coordinator = start_and_kill(dir, replicas_on(6, {&a, &b, &c}, 2), c);
  const auto status = coordinator->wait(run_timeout);
  INFO(to_string(status));
  CLUSTER_REQUIRE(status.exited, coordinator.get());
  CLUSTER_REQUIRE(status.code == 0, coordinator.get());
  // Both of node c's replicas (4 and 5) died in one round and respawned on
  // a and b, one each: the nodes hosting the fewest.
  const auto err = coordinator->err();
  INFO(coordinator->describe());
  const std::regex respawned{"replica [45] on node " + c.address
                             + R"( \(cpu\) died in epoch [0-9]+: [^\n]*; respawned on node (\S+) \(cpu\) at round [0-9]+ in [0-9]+ ms)"};
  CHECK(count_of(err, respawned) == 2);
  CHECK(err.find("respawned on node " + a.address) != std::string::npos);
  CHECK(err.find("respawned on node " + b.address) != std::string::npos);
  const auto remote = read_metrics(dir.file("coordinator.jsonl"));
  CHECK(records_of(remote, "epoch").size() == 4);
  // The metrics record each respawn with its round, and the final record
  // counts them.
  const auto respawns = records_of(remote, "respawn");
  REQUIRE(respawns.size() == 2);
  for (const auto& r : respawns) {
    INFO(r.dump());
    CHECK((r["replica"] == 4 || r["replica"] == 5));
    CHECK(r["lost_on"] == "node " + c.address + " (cpu)");
    CHECK(r["round"] == respawns[0]["round"]); // one round: both died in it
    CHECK(r["round"].get<uint64_t>() >= 334);   // after epoch 1's 334 rounds
    CHECK(r["milliseconds"].get<double>() < 1000);
  }
  CHECK(records_of(remote, "final")[0]["respawns"] == 2);
  CHECK(records_of(remote, "final")[0]["live_replicas"] == 6);
  expect_local_bits(dir, 6, dir.file("coordinator.jsonl"));
  CHECK(seconds_since(start) < 90);
}

TEST_CASE("with --respawn=anywhere the only node's death moves its replicas into the "
          "coordinator, and the run keeps the bits of one process",
          "[cluster][failure][kill][respawn]") {
  temp_dir dir{"troupe-cluster"};
  auto a = start_node(dir, "node-a");
  auto coordinator = start_and_kill(dir, replicas_on(2, {&a}, 2, {"--respawn=anywhere"}), a);
  const auto status = coordinator->wait(run_timeout);
  INFO(to_string(status));
  CLUSTER_REQUIRE(status.exited, coordinator.get());
  CLUSTER_REQUIRE(status.code == 0, coordinator.get());
  const std::regex here{R"(; respawned on cpu at round [0-9]+)"};
  CLUSTER_CHECK(count_of(coordinator->err(), here) == 2, coordinator.get());
  expect_local_bits(dir, 2, dir.file("coordinator.jsonl"));
}

TEST_CASE("the death of the only node that could host a respawn ends the run within "
          "seconds, saying so",
          "[cluster][failure][kill][respawn]") {
  temp_dir dir{"troupe-cluster"};
  auto a = start_node(dir, "node-a");
  auto coordinator = start_and_kill(dir, replicas_on(2, {&a}, 2), a);
  const auto status = coordinator->wait(exit_timeout);
  INFO(to_string(status));
  CLUSTER_REQUIRE(!status.timed_out, coordinator.get());
  CLUSTER_CHECK(status.code == 1, coordinator.get());
  const auto err = coordinator->err();
  CLUSTER_CHECK(err.find("no live node can host its respawn") != std::string::npos,
                coordinator.get());
  CLUSTER_CHECK(err.find("--respawn=anywhere") != std::string::npos, coordinator.get());
  CHECK(status.seconds < 5);
}

TEST_CASE("a node frozen past the heartbeat timeout is replaced, and once thawed it is "
          "fenced off: the run keeps the bits of one process",
          "[cluster][failure][freeze][respawn]") {
  temp_dir dir{"troupe-cluster"};
  auto a = start_node(dir, "node-a");
  auto b = start_node(dir, "node-b");
  auto args = replicas_on(2, {&a, &b}, 1);
  args.push_back("--metrics=" + dir.file("coordinator.jsonl"));
  process coordinator{mnist_command(std::move(args)), dir.path(), "coordinator"};
  CLUSTER_REQUIRE(coordinator.wait_for_line(stream::out, "Epoch 1/4", line_timeout),
                  &coordinator);
  b.proc->send(SIGSTOP);
  // 200 ms heartbeats, 1 s timeout: the replica respawns on node a.
  const auto replaced = coordinator.wait_for_line(stream::err, "respawned on node " + a.address,
                                                  line_timeout);
  b.proc->send(SIGCONT);
  CLUSTER_REQUIRE(replaced.has_value(), &coordinator);
  const auto status = coordinator.wait(run_timeout);
  INFO(to_string(status));
  CLUSTER_REQUIRE(status.exited, &coordinator);
  CLUSTER_REQUIRE(status.code == 0, &coordinator);
  // Thawed, node b finds its link to the coordinator gone and stops the old
  // replica: nothing it computed late reaches the store.
  CLUSTER_CHECK(b.proc->wait_for_line(stream::err, "replica 1 stopped", notice_timeout),
                b.proc.get());
  expect_local_bits(dir, 2, dir.file("coordinator.jsonl"));
}

TEST_CASE("a node that joins mid-run takes replicas from the busiest nodes, the node it "
          "took them from may die next, and the run keeps the bits of one process",
          "[cluster][join][respawn]") {
  temp_dir dir{"troupe-cluster"};
  auto a = start_node(dir, "node-a");
  auto b = start_node(dir, "node-b");
  const auto joins = free_join_door();
  auto started = start_run(dir, replicas_on(4, {&a, &b}, 2, {"--accept-joins=" + joins}), false);
  process& coordinator = *started;
  // Node c hosts one of the four (its share of three nodes), taken from a.
  auto c = join_run(dir, "node-c", joins, 0);
  CLUSTER_CHECK(c.proc->wait_for_line(stream::err, "replica 0 of 4 on cpu started",
                                      notice_timeout),
                c.proc.get());
  a.proc->send(SIGKILL); // replica 1 respawns on c or b, the nodes left
  const auto status = coordinator.wait(run_timeout);
  INFO(to_string(status));
  CLUSTER_REQUIRE(status.exited, &coordinator);
  CLUSTER_REQUIRE(status.code == 0, &coordinator);
  const auto err = coordinator.err();
  CLUSTER_CHECK(err.find("node " + c.address + " joined in epoch") != std::string::npos,
                &coordinator);
  CLUSTER_CHECK(err.find("replica 1 on node " + a.address) != std::string::npos, &coordinator);
  const auto metrics = read_metrics(dir.file("coordinator.jsonl"));
  const auto moves = records_of(metrics, "move");
  REQUIRE(moves.size() == 1);
  CHECK(moves[0]["replica"] == 0);
  CHECK(moves[0]["lost_on"] == "node " + a.address + " (cpu)");
  CHECK(moves[0]["respawned_on"] == "node " + c.address + " (cpu)");
  CHECK(records_of(metrics, "respawn").size() == 1); // replica 1, from node a
  expect_local_bits(dir, 4, dir.file("coordinator.jsonl"));
}

TEST_CASE("with --respawn-timeout the death of the only node waits for a node to join, "
          "which takes its replicas, or ends the run once the wait is over",
          "[cluster][join][respawn]") {
  temp_dir dir{"troupe-cluster"};
  SECTION("a node joins in time") {
    auto a = start_node(dir, "node-a");
    const auto joins = free_join_door();
    auto coordinator = start_and_kill(
      dir, replicas_on(2, {&a}, 2, {"--accept-joins=" + joins, "--respawn-timeout=20000"}), a);
    CLUSTER_REQUIRE(coordinator->wait_for_line(stream::err, "waiting up to 20000 ms",
                                               line_timeout),
                    coordinator.get());
    auto b = start_node(dir, "node-b", {"--join=" + joins});
    const auto status = coordinator->wait(run_timeout);
    INFO(to_string(status));
    CLUSTER_REQUIRE(status.exited, coordinator.get());
    CLUSTER_REQUIRE(status.code == 0, coordinator.get());
    const std::regex onto_b{"; respawned on node " + b.address};
    CLUSTER_CHECK(count_of(coordinator->err(), onto_b) == 2, coordinator.get());
    expect_local_bits(dir, 2, dir.file("coordinator.jsonl"));
  }
  SECTION("nobody joins") {
    auto a = start_node(dir, "node-a");
    auto coordinator = start_and_kill(
      dir,
      replicas_on(2, {&a}, 2,
                  {"--accept-joins=" + free_join_door(), "--respawn-timeout=1000"}),
      a);
    const auto status = coordinator->wait(exit_timeout);
    INFO(to_string(status));
    CLUSTER_REQUIRE(!status.timed_out, coordinator.get());
    CLUSTER_CHECK(status.code == 1, coordinator.get());
    CLUSTER_CHECK(coordinator->err().find("no node joined within --respawn-timeout=1000 ms")
                    != std::string::npos,
                  coordinator.get());
    CHECK(status.seconds < 6);
  }
}

TEST_CASE("the node that just took a respawn may die too: its replicas respawn again on "
          "the last node, and the run keeps the bits of one process",
          "[cluster][failure][kill][respawn]") {
  temp_dir dir{"troupe-cluster"};
  auto a = start_node(dir, "node-a");
  auto b = start_node(dir, "node-b");
  auto c = start_node(dir, "node-c");
  auto coordinator = start_and_kill(dir, replicas_on(3, {&a, &b, &c}, 1), c);
  // Replica 2 respawns on a (the first of the nodes hosting one): kill a
  // at once, with its own replica and the respawned one.
  const auto taken = coordinator->wait_for_line(stream::err, "respawned on node " + a.address,
                                                line_timeout);
  CLUSTER_REQUIRE(taken.has_value(), coordinator.get());
  a.proc->send(SIGKILL);
  const auto status = coordinator->wait(run_timeout);
  INFO(to_string(status));
  CLUSTER_REQUIRE(status.exited, coordinator.get());
  CLUSTER_REQUIRE(status.code == 0, coordinator.get());
  const std::regex onto_b{"respawned on node " + b.address};
  CLUSTER_CHECK(count_of(coordinator->err(), onto_b) == 2, coordinator.get());
  const auto metrics = read_metrics(dir.file("coordinator.jsonl"));
  CHECK(records_of(metrics, "respawn").size() == 3);
  CHECK(records_of(metrics, "epoch").back()["live_nodes"] == 1);
  CHECK(records_of(metrics, "final")[0]["respawns"] == 3);
  expect_local_bits(dir, 3, dir.file("coordinator.jsonl"));
}

namespace {

// Three replicas, one a node, an epoch of 668 rounds: node a with `fault_a`,
// c killed at round 800 and b at 900, the store's shards on the first
// `store_nodes` of a, b and c, --respawn=anywhere. Requires the run to end
// well; returns the nodes and the coordinator's metrics.
struct refusing_run {
  node_process a, b, c;
  std::vector<nlohmann::json> metrics;
};

refusing_run run_with_a_refusing(const temp_dir& dir, const std::string& fault_a,
                                 size_t store_nodes) {
  refusing_run run{start_node(dir, "node-a", {"--fault=" + fault_a}),
                   start_node(dir, "node-b", {"--fault=kill@900"}),
                   start_node(dir, "node-c", {"--fault=kill@800"}),
                   {}};
  std::string stores;
  for (const auto* node : {&run.a, &run.b, &run.c})
    if (store_nodes-- > 0)
      stores += (stores.empty() ? "" : ",") + node->address;
  auto args = on_nodes(3, {&run.a, &run.b, &run.c}, 1,
                       {"--store-nodes=" + stores, "--respawn=anywhere",
                        "--metrics=" + dir.file("coordinator.jsonl")});
  process coordinator{mnist_command(std::move(args)), dir.path(), "coordinator"};
  const auto status = coordinator.wait(run_timeout);
  INFO(to_string(status));
  CLUSTER_REQUIRE(status.exited, &coordinator);
  CLUSTER_REQUIRE(status.code == 0, &coordinator);
  run.metrics = read_metrics(dir.file("coordinator.jsonl"));
  return run;
}

} // namespace

TEST_CASE("a store node that refuses a respawned replica keeps serving its shard, and a "
          "healed shard may go there: the run keeps the bits of one process",
          "[cluster][failure][kill][respawn]") {
  // Three replicas, one an epoch of 668 rounds; shards on a and b only. a
  // refuses replicas from round 700 on, c dies at 800 (its replica tries a,
  // then goes to b), and b dies at 900: its shard heals onto a, the one
  // store node left, and its replicas into the coordinator.
  temp_dir dir{"troupe-cluster"};
  auto [a, b, c, metrics] = run_with_a_refusing(dir, "refuse@700", 2);
  CLUSTER_CHECK(a.proc->err().find("replica 2 of 3 on cpu cannot start: this node refuses "
                                   "replicas")
                  != std::string::npos,
                a.proc.get());
  const auto respawns = records_of(metrics, "respawn");
  REQUIRE_FALSE(respawns.empty());
  CHECK(respawns[0]["replica"] == 2);
  CHECK(respawns[0]["respawned_on"] == "node " + b.address + " (cpu)");
  const auto heals = records_of(metrics, "store_heal");
  REQUIRE(heals.size() == 1);
  CHECK(heals[0]["lost_on"] == "node " + b.address);
  CHECK(heals[0]["respawned_on"] == "node " + a.address);
  expect_local_bits(dir, 3, dir.file("coordinator.jsonl"));
}

TEST_CASE("a node whose store shard fails to start keeps training replicas, and a store "
          "heal places replicas there: the run keeps the bits of one process",
          "[cluster][failure][kill][respawn]") {
  // Three replicas, one an epoch of 668 rounds; a shard on each node. a
  // refuses store shards from round 700 on. c dies at 800: the store heals
  // with a's and c's shards on b (each tried a first), and c's replica on a.
  // b dies at 900: the store heals into the coordinator, every replica on a.
  temp_dir dir{"troupe-cluster"};
  auto [a, b, c, metrics] = run_with_a_refusing(dir, "refuse-store@700", 3);
  const auto log_a = a.proc->err();
  CLUSTER_CHECK(log_a.find("cannot start: this node refuses store shards") != std::string::npos,
                a.proc.get());
  CLUSTER_CHECK(log_a.find("replica 1 of 3 on cpu started") != std::string::npos, a.proc.get());
  const auto heals = records_of(metrics, "store_heal");
  REQUIRE(heals.size() == 2);
  CHECK(heals[0]["respawned_on"] == "node " + b.address);
  CHECK(heals[1]["respawned_on"] == "this process");
  CHECK(records_of(metrics, "epoch").back()["live_nodes"] == 1);
  expect_local_bits(dir, 3, dir.file("coordinator.jsonl"));
}
