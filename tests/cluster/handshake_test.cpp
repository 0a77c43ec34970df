// The connect handshake between real processes: a protocol version or model
// mismatch is refused before any replica starts, with a clear error on both
// sides, and the node stays up for compatible coordinators.
#include "tests/cluster/cluster_test.hpp"

#include "actors/cluster/handshake.hpp" // troupe_protocol_version: what these processes speak

using namespace troupe::cluster_test;

namespace {

// The version this build's processes announce, as their errors print it.
const std::string our_version = std::to_string(troupe::troupe_protocol_version);

} // namespace

TEST_CASE("a node announcing another protocol version refuses the coordinator at connect",
          "[cluster][handshake]") {
  const auto start = clock_type::now();
  temp_dir dir{"troupe-cluster"};
  auto node = start_node(dir, "node-v99", {"--troupe.protocol-version=99"});
  auto run = run_mnist(dir, "coordinator", {"--nodes=" + node.address, "--epochs=1"},
                       exit_timeout);
  {
    INFO(run.description);
    REQUIRE(run.status.exited);
    CHECK(run.status.code == 1);
    CHECK(run.status.seconds < 5);
    CHECK(run.err.find("error: handshake with node " + node.address) != std::string::npos);
    CHECK(run.err.find("protocol version " + our_version + ", expected 99")
          != std::string::npos);
    CHECK(records_of(run.metrics, "epoch").empty());
  }
  CLUSTER_CHECK(node.proc->wait_for_line(stream::err, "refused coordinator", notice_timeout),
                node.proc.get());
  CLUSTER_CHECK(node.proc->err().find("protocol version") != std::string::npos,
                node.proc.get());
  CLUSTER_CHECK(node.proc->err().find("started") == std::string::npos, node.proc.get());
  CLUSTER_CHECK(node.proc->running(), node.proc.get());
  CHECK(seconds_since(start) < 30);
}

TEST_CASE("a coordinator announcing another protocol version is refused by the node",
          "[cluster][handshake]") {
  temp_dir dir{"troupe-cluster"};
  auto node = start_node(dir, "node");
  // An older protocol than ours, as a coordinator built before the last bump.
  const std::string older = std::to_string(troupe::troupe_protocol_version - 1);
  auto run = run_mnist(dir, "coordinator-v" + older,
                       {"--nodes=" + node.address, "--epochs=1",
                        "--troupe.protocol-version=" + older},
                       exit_timeout);
  {
    INFO(run.description);
    REQUIRE(run.status.exited);
    CHECK(run.status.code == 1);
    CHECK(run.err.find("protocol version " + older + ", expected " + our_version)
          != std::string::npos);
  }
  CLUSTER_CHECK(node.proc->wait_for_line(stream::err, "refused coordinator", notice_timeout),
                node.proc.get());
  CLUSTER_CHECK(node.proc->running(), node.proc.get());
}

TEST_CASE("a node serving one model refuses a coordinator training another and then serves "
          "a matching one",
          "[cluster][handshake]") {
  const auto start = clock_type::now();
  temp_dir dir{"troupe-cluster"};
  auto node = start_node(dir, "node", {"--model=784-64relu-10"});
  auto wrong = run_mnist(dir, "coordinator-128",
                         {"--nodes=" + node.address, "--model=784-128relu-10", "--epochs=1"},
                         exit_timeout);
  {
    INFO(wrong.description);
    REQUIRE(wrong.status.exited);
    CHECK(wrong.status.code == 1);
    CHECK(wrong.status.seconds < 5);
    CHECK(wrong.err.find("error: handshake with node " + node.address) != std::string::npos);
    CHECK(wrong.err.find("model 784-128relu-10, expected 784-64relu-10") != std::string::npos);
  }
  auto refused = node.proc->wait_for_line(stream::err, "refused coordinator", notice_timeout);
  CLUSTER_REQUIRE(refused, node.proc.get());
  CHECK(refused->find("model 784-128relu-10, expected 784-64relu-10") != std::string::npos);
  CLUSTER_CHECK(node.proc->err().find("started") == std::string::npos, node.proc.get());

  auto right = run_mnist(dir, "coordinator-64",
                         {"--nodes=" + node.address, "--model=784-64relu-10", "--epochs=1",
                          "--batch-size=32"},
                         run_timeout);
  INFO(right.description);
  REQUIRE(right.status.exited);
  CHECK(right.status.code == 0);
  CHECK(records_of(right.metrics, "final").size() == 1);
  CLUSTER_CHECK(node.proc->err().find("accepted coordinator (model 784-64relu-10")
                  != std::string::npos,
                node.proc.get());
  CHECK(seconds_since(start) < 60);
}
