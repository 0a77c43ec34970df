// A replica that cannot set up on its node (here: a device no machine has)
// fails the run with the same reason a local run gives, and the node says so.
#include "tests/cluster/cluster_test.hpp"

using namespace troupe::cluster_test;

namespace {

// Out of range on a GPU host, unavailable on a CPU host or a build without
// CUDA: make_backend refuses it everywhere, each time with its reason.
const std::string missing_device = "cuda:99";

// Returns the rest of the line that follows `prefix` in `text` (empty if absent).
std::string rest_of_line(const std::string& text, const std::string& prefix) {
  const auto at = text.find(prefix);
  if (at == std::string::npos)
    return {};
  const auto from = at + prefix.size();
  return text.substr(from, text.find('\n', from) - from);
}

} // namespace

TEST_CASE("a replica that cannot open its device on a node fails the run with the local "
          "run's reason, and the node logs it and serves the next job",
          "[cluster][failure][device]") {
  const auto start = clock_type::now();
  temp_dir dir{"troupe-cluster"};
  // The reference: the same request without --nodes.
  auto local = run_mnist(dir, "local", {"--epochs=1", "--devices=" + missing_device},
                         run_timeout);
  std::string reason;
  {
    INFO(local.description);
    REQUIRE(local.status.exited);
    REQUIRE(local.status.code != 0);
    reason = rest_of_line(local.err, "error: cannot start replica 0 on " + missing_device + ": ");
    REQUIRE(!reason.empty());
  }
  auto node = start_node(dir, "node");
  auto remote = run_mnist(dir, "remote",
                          {"--epochs=1", "--nodes=" + node.address, "--replicas-per-node=1",
                           "--devices=" + missing_device},
                          run_timeout);
  {
    INFO(remote.description);
    INFO("local reason: " << reason);
    REQUIRE(remote.status.exited);
    CHECK(remote.status.code != 0);
    CHECK(remote.status.seconds < 10);
    CHECK(rest_of_line(remote.err, "error: cannot start replica 0 on node " + node.address
                                     + " (" + missing_device + "): ")
          == reason);
    CHECK(records_of(remote.metrics, "final").empty());
  }
  // The node names the replica, the device and the reason in one line.
  const auto logged = node.proc->wait_for_line(stream::err, reason, notice_timeout);
  CLUSTER_REQUIRE(logged, node.proc.get());
  CLUSTER_CHECK(logged->find("replica 0") != std::string::npos, node.proc.get());
  CLUSTER_CHECK(logged->find(missing_device) != std::string::npos, node.proc.get());
  // The node keeps serving: a good job through it succeeds.
  CLUSTER_REQUIRE(node.proc->running(), node.proc.get());
  auto good = run_mnist(dir, "good",
                        {"--epochs=1", "--nodes=" + node.address, "--replicas-per-node=1",
                         "--devices=cpu", "--seed=5"},
                        run_timeout);
  {
    INFO(good.description);
    REQUIRE(good.status.exited);
    CHECK(good.status.code == 0);
    CHECK(records_of(good.metrics, "final").size() == 1);
  }
  CLUSTER_CHECK(node.proc->running(), node.proc.get());
  // And it stops cleanly: the failed replica left nothing behind that blocks it.
  node.proc->send(SIGTERM);
  const auto stopped = node.proc->wait(exit_timeout);
  INFO(to_string(stopped));
  CLUSTER_CHECK(stopped.exited, node.proc.get());
  CLUSTER_CHECK(stopped.code == 0, node.proc.get());
  CHECK(seconds_since(start) < 90);
}
