// A node's life: it stops cleanly (exit 0, bounded) on SIGTERM or SIGINT,
// idle, after a job, or with a job running.
#include "tests/cluster/cluster_test.hpp"

using namespace troupe::cluster_test;

namespace {

void expect_clean_stop(node_process& node, int signal, const std::string& said) {
  node.proc->send(signal);
  const auto status = node.proc->wait(exit_timeout);
  INFO(to_string(status));
  CLUSTER_REQUIRE(status.exited, node.proc.get());
  CLUSTER_CHECK(status.code == 0, node.proc.get());
  CHECK(status.seconds < 5);
  CLUSTER_CHECK(node.proc->out().find("troupe node: stopping (" + said + ")")
                  != std::string::npos,
                node.proc.get());
}

} // namespace

TEST_CASE("an idle node stops cleanly on SIGTERM", "[cluster][node][signal]") {
  temp_dir dir{"troupe-cluster"};
  auto node = start_node(dir, "node");
  CHECK(node.banner.find("(plaintext)") != std::string::npos);
  CHECK(node.address.rfind("127.0.0.1:", 0) == 0);
  expect_clean_stop(node, SIGTERM, "SIGTERM");
}

TEST_CASE("a node stops cleanly on SIGTERM after a job", "[cluster][node][signal]") {
  temp_dir dir{"troupe-cluster"};
  auto node = start_node(dir, "node");
  auto run = run_mnist(dir, "coordinator",
                       {"--nodes=" + node.address, "--epochs=1", "--batch-size=32"},
                       run_timeout);
  {
    INFO(run.description);
    REQUIRE(run.status.exited);
    REQUIRE(run.status.code == 0);
  }
  CLUSTER_CHECK(node.proc->wait_for_line(stream::err, "replica 0 stopped", notice_timeout),
                node.proc.get());
  expect_clean_stop(node, SIGTERM, "SIGTERM");
}

// CAF 0.17 sometimes never finishes destroying a detached replica stopped
// mid-request; the node bounds that wait (3 s), so it still exits 0 in time.
TEST_CASE("a node stops cleanly on SIGINT with a job running and the coordinator names it",
          "[cluster][node][signal]") {
  temp_dir dir{"troupe-cluster"};
  auto node = start_node(dir, "node");
  process coordinator{mnist_command({"--nodes=" + node.address, "--epochs=4",
                                     "--batch-size=4", "--on-replica-loss=abort"}),
                      dir.path(), "coordinator"};
  CLUSTER_REQUIRE(coordinator.wait_for_line(stream::out, "Epoch 1/4", line_timeout),
                  &coordinator);
  CLUSTER_REQUIRE(coordinator.running(), &coordinator);
  expect_clean_stop(node, SIGINT, "SIGINT");
  const auto status = coordinator.wait(exit_timeout);
  INFO(to_string(status));
  CLUSTER_REQUIRE(status.exited, &coordinator);
  CLUSTER_CHECK(status.code == 1, &coordinator);
  CLUSTER_CHECK(coordinator.err().find("replica 0 on node " + node.address)
                  != std::string::npos,
                &coordinator);
}

TEST_CASE("a node on a port another node holds says the address is in use and exits 1",
          "[cluster][node][port]") {
  temp_dir dir{"troupe-cluster"};
  auto first = start_node(dir, "node-first");
  const auto port = first.address.substr(first.address.rfind(':') + 1);
  process second{{node_binary(), "--port=" + port}, dir.path(), "node-second"};
  const auto status = second.wait(exit_timeout);
  INFO(to_string(status));
  CLUSTER_REQUIRE(status.exited, &second);
  CLUSTER_CHECK(status.code == 1, &second);
  CLUSTER_CHECK(second.err().find("error: cannot listen on 127.0.0.1:" + port
                                  + ": Address already in use")
                  != std::string::npos,
                &second);
  CLUSTER_CHECK(first.proc->running(), first.proc.get());
}
