// Schedules of failures in exact rounds: each node's --fault=kill@R or
// stop@R makes its process signal itself as one of its replicas is about to
// push round R (or one of its store shards to take a push of round R), and
// a node may join at half the run. Whatever the schedule,
// the sync run ends with the checksum of one process running as many
// replicas, with nothing having failed there.
#include "tests/cluster/respawn_runs.hpp"

#include <algorithm>
#include <map>
#include <regex>
#include <set>

using namespace troupe::cluster_test;
using namespace troupe::respawn_runs;

namespace {

// Six replicas, two per node, at one sample each per round: 334 rounds an
// epoch, 1336 in the run. Round 401 is 30 % of the way.
constexpr uint32_t replicas = 6;
constexpr uint64_t fault_round = 401;

struct schedule {
  std::string name;
  // Nodes a, b, c, then with store_only_nodes s and t: "" or their --fault.
  std::vector<std::string> faults;
  bool store_here = false;         // the store in the coordinator, not on the nodes
  bool join_at_half = false;       // node d joins once epoch 2 ends
  bool store_only_nodes = false;   // the store's shards on s and t, which host no replica
};

std::string kill_at() { return "kill@" + std::to_string(fault_round); }
std::string stop_at() { return "stop@" + std::to_string(fault_round); }

// The metrics of one process with the same settings, run once.
const std::vector<nlohmann::json>& local_metrics(const temp_dir& dir) {
  static const std::vector<nlohmann::json> metrics = [&dir] {
    auto local = run_mnist(dir, "local",
                           run_args(replicas, {"--replicas=" + std::to_string(replicas)}),
                           run_timeout);
    INFO(local.description);
    REQUIRE(local.status.code == 0);
    return local.metrics;
  }();
  return metrics;
}

// Each respawn, move and heal starts a membership epoch of its own, the
// records name it, and the final record the last one.
void expect_membership_epochs(const std::vector<nlohmann::json>& metrics) {
  const uint64_t last = records_of(metrics, "final").at(0)["membership"].get<uint64_t>();
  std::set<uint64_t> seen;
  for (const char* kind : {"respawn", "move", "store_heal"})
    for (const auto& r : records_of(metrics, kind)) {
      INFO(r.dump());
      const auto epoch = r["membership"].get<uint64_t>();
      CHECK(epoch > 1);
      CHECK(epoch <= last);
      seen.insert(epoch);
    }
  CHECK_FALSE(seen.empty());
  CHECK(last >= 1 + seen.size());
}

// Each recovery record ends the respawn or heal of its membership epoch as
// the round that one restarted from closes, after its news. Every respawn
// (store in the coordinator) ends so, and the last heal; a respawn or heal
// that a later heal overtook ends in that one.
void expect_recoveries(const schedule& plan, const std::vector<nlohmann::json>& metrics) {
  std::map<uint64_t, nlohmann::json> began; // by membership epoch
  for (const char* kind : {"respawn", "store_heal"})
    for (const auto& r : records_of(metrics, kind))
      began[r["membership"].get<uint64_t>()] = r;
  const auto recoveries = records_of(metrics, "recovery");
  for (const auto& r : recoveries) {
    INFO(r.dump());
    const auto found = began.find(r["membership"].get<uint64_t>());
    REQUIRE(found != began.end());
    CHECK(r["after"] == found->second["record"]);
    CHECK(r["round"] == found->second["round"]);
    CHECK(r["closed_at"].get<double>() >= found->second["noticed_at"].get<double>());
    CHECK(r["closed_ms"].get<double>() >= found->second["milliseconds"].get<double>());
  }
  if (plan.store_here) {
    CHECK(recoveries.size() == records_of(metrics, "respawn").size());
    return;
  }
  const auto heals = records_of(metrics, "store_heal");
  REQUIRE_FALSE(heals.empty());
  CHECK(std::any_of(recoveries.begin(), recoveries.end(), [&heals](const nlohmann::json& r) {
    return r["membership"] == heals.back()["membership"];
  }));
}

// The records that say each failure landed in the fault's round.
void expect_failures_in_round(const schedule& plan, const std::vector<nlohmann::json>& metrics,
                              const std::vector<node_process>& nodes) {
  if (plan.store_here) {
    const auto respawns = records_of(metrics, "respawn");
    CHECK(respawns.size() == 2); // the two replicas of the one node lost
    for (const auto& r : respawns)
      CHECK(r["round"] == fault_round);
    return;
  }
  // A store node lost: the store rolls back to its newest snapshot, no later
  // than the round the node died in, and heals. Nodes killed in one round
  // heal once when their deaths are noticed together, and twice when the
  // first heal stopped the other before it reached the round, so that it
  // dies as the run computes that round again.
  const auto heals = records_of(metrics, "store_heal");
  const auto killed = static_cast<size_t>(
    std::count_if(plan.faults.begin(), plan.faults.end(),
                  [](const std::string& fault) { return !fault.empty(); }));
  REQUIRE(!heals.empty());
  REQUIRE(heals.size() <= killed);
  for (const auto& heal : heals) {
    CHECK(heal["round"].get<uint64_t>() <= fault_round);
    CHECK(heal["round"].get<uint64_t>() >= 334); // epoch 1's end, at the oldest
  }
  if (plan.store_only_nodes) { // t's shard moves to s, the store node left
    CHECK(heals[0]["lost_on"] == "node " + nodes[4].address);
    CHECK(heals[0]["respawned_on"] == "node " + nodes[3].address);
  }
}

} // namespace

TEST_CASE("a schedule of kills, stops and a join in exact rounds ends with the checksum of "
          "one process where nothing failed",
          "[cluster][failure][schedule][respawn]") {
  const schedule plan = GENERATE(
    schedule{"kill one of three replica nodes at 30 %", {"", "", kill_at()}, true},
    schedule{"kill one of three store nodes at 30 %", {"", "", kill_at()}},
    schedule{"kill two store nodes in one round", {"", kill_at(), kill_at()}},
    schedule{"stop a node past the timeout, then continue it", {"", stop_at(), ""}, true},
    schedule{"kill a node at 30 %, join one at 50 %", {"", "", kill_at()}, true, true},
    schedule{"kill a node that hosts store shards only", {"", "", "", "", kill_at()}, false,
             false, true});
  INFO(plan.name);
  temp_dir dir{"troupe-cluster"};
  std::vector<node_process> nodes;
  for (size_t k = 0; k < plan.faults.size(); ++k)
    nodes.push_back(start_node(dir, std::string("node-") + "abcst"[k],
                               plan.faults[k].empty()
                                 ? std::vector<std::string>{}
                                 : std::vector<std::string>{"--fault=" + plan.faults[k]}));
  std::vector<std::string> extra{"--metrics=" + dir.file("coordinator.jsonl")};
  std::string joins;
  if (plan.join_at_half) {
    joins = troupe::respawn_runs::free_join_door();
    extra.push_back("--accept-joins=" + joins);
  }
  if (plan.store_only_nodes)
    extra.push_back("--store-nodes=" + nodes[3].address + "," + nodes[4].address);
  auto args = plan.store_here
                ? replicas_on(replicas, {&nodes[0], &nodes[1], &nodes[2]}, 2, extra)
                : on_nodes(replicas, {&nodes[0], &nodes[1], &nodes[2]}, 2, extra);
  process coordinator{mnist_command(std::move(args)), dir.path(), "coordinator"};
  std::optional<node_process> joined;
  if (plan.join_at_half) {
    CLUSTER_REQUIRE(coordinator.wait_for_line(stream::out, "Epoch 2/4", run_timeout),
                    &coordinator);
    joined = start_node(dir, "node-d", {"--join=" + joins});
  }
  for (auto& node : nodes)
    if (plan.faults[&node - nodes.data()].rfind("stop", 0) == 0) {
      // Frozen past the heartbeat timeout: replaced, then thawed.
      CLUSTER_REQUIRE(coordinator.wait_for_line(stream::err, "; respawned on", run_timeout),
                      &coordinator);
      node.proc->send(SIGCONT);
    }
  const auto status = coordinator.wait(run_timeout);
  INFO(to_string(status));
  CLUSTER_REQUIRE(status.exited, &coordinator);
  CLUSTER_REQUIRE(status.code == 0, &coordinator);
  INFO(coordinator.describe());
  const auto metrics = read_metrics(dir.file("coordinator.jsonl"));
  expect_failures_in_round(plan, metrics, nodes);
  expect_recoveries(plan, metrics);
  expect_membership_epochs(metrics);
  if (joined)
    CHECK_FALSE(records_of(metrics, "move").empty()); // the joining node took replicas
  expect_local_run(metrics, local_metrics(dir));
}
