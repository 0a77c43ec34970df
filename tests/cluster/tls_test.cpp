// Mutual TLS end to end between node and coordinator processes, with
// certificates from scripts/make_certs.sh: the cluster CA's certificates
// train; another CA's, or none, are refused; a node with a missing key file
// does not start.
#include "tests/cluster/cluster_test.hpp"

using namespace troupe::cluster_test;

namespace {

// Makes `dir`/`sub`/ca.pem and a pair per name.
std::string make_certs(const temp_dir& dir, const std::string& sub,
                       std::vector<std::string> names) {
  const auto certs = dir.file(sub);
  std::vector<std::string> argv{"bash", source_dir() + "/scripts/make_certs.sh", certs};
  for (auto& name : names)
    argv.push_back(std::move(name));
  process script{argv, dir.path(), "make_certs-" + sub};
  const auto status = script.wait(milliseconds{60000});
  CLUSTER_REQUIRE(status.exited, &script);
  CLUSTER_REQUIRE(status.code == 0, &script);
  return certs;
}

std::vector<std::string> tls_options(const std::string& certs, const std::string& name) {
  return {"--tls-cert=" + certs + "/" + name + ".pem", "--tls-key=" + certs + "/" + name + ".key",
          "--tls-ca=" + certs + "/ca.pem"};
}

std::vector<std::string> with(std::vector<std::string> args,
                              const std::vector<std::string>& more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

// Expects a coordinator run that the TLS node refused at connect.
void expect_refused(const run_result& run, const node_process& node) {
  INFO(run.description << "\n" << node.proc->describe());
  REQUIRE(run.status.exited);
  CHECK(run.status.code == 1);
  CHECK(run.status.seconds < 8);
  CHECK(run.err.find("cannot reach node " + node.address) != std::string::npos);
  CHECK(records_of(run.metrics, "epoch").empty());
}

} // namespace

TEST_CASE("training works over mutual TLS between a node and a coordinator certified by one CA",
          "[cluster][tls]") {
  const auto start = clock_type::now();
  temp_dir dir{"troupe-cluster"};
  const auto certs = make_certs(dir, "cluster", {"coordinator", "node1"});
  auto node = start_node(dir, "node", tls_options(certs, "node1"));
  CHECK(node.banner.find("(mutual TLS)") != std::string::npos);
  auto run = run_mnist(dir, "coordinator",
                       with({"--nodes=" + node.address, "--epochs=1", "--batch-size=32"},
                            tls_options(certs, "coordinator")),
                       run_timeout);
  INFO(run.description << "\n" << node.proc->describe());
  REQUIRE(run.status.exited);
  REQUIRE(run.status.code == 0);
  const auto final_records = records_of(run.metrics, "final");
  REQUIRE(final_records.size() == 1);
  CHECK(final_records[0]["test_accuracy"].get<double>() > 0.5);
  CHECK(node.proc->err().find("replica 0 of 1 on cpu started") != std::string::npos);
  CHECK(seconds_since(start) < 60);
}

TEST_CASE("docs/tls.md's layout trains over mutual TLS: two nodes, each its own certificate and "
          "a store shard, with the bits of the same run in plaintext",
          "[cluster][tls]") {
  temp_dir dir{"troupe-cluster"};
  const auto certs = make_certs(dir, "cluster", {"coordinator", "node1", "node2"});
  auto first = start_node(dir, "node1", tls_options(certs, "node1"));
  auto second = start_node(dir, "node2", tls_options(certs, "node2"));
  const std::vector<std::string> run_args{"--nodes=" + first.address + "," + second.address,
                                          "--replicas-per-node=2", "--epochs=1"};
  auto tls = run_mnist(dir, "tls", with(run_args, tls_options(certs, "coordinator")),
                       run_timeout);
  INFO(tls.description << "\n" << first.proc->describe() << "\n" << second.proc->describe());
  REQUIRE(tls.status.exited);
  REQUIRE(tls.status.code == 0);
  CHECK(tls.out.find("2 store shards on 2 nodes") != std::string::npos);
  auto plain_first = start_node(dir, "plain1");
  auto plain_second = start_node(dir, "plain2");
  auto plain = run_mnist(dir, "plain",
                         {"--nodes=" + plain_first.address + "," + plain_second.address,
                          "--replicas-per-node=2", "--epochs=1"},
                         run_timeout);
  REQUIRE(plain.status.exited);
  REQUIRE(plain.status.code == 0);
  CHECK(records_of(tls.metrics, "final")[0]["params_fnv1a64"]
        == records_of(plain.metrics, "final")[0]["params_fnv1a64"]);
}

TEST_CASE("a TLS node refuses coordinators certified by another CA or speaking plaintext and "
          "keeps serving",
          "[cluster][tls]") {
  const auto start = clock_type::now();
  temp_dir dir{"troupe-cluster"};
  const auto certs = make_certs(dir, "cluster", {"coordinator", "node1"});
  const auto other = make_certs(dir, "other", {"rogue"});
  auto node = start_node(dir, "node", tls_options(certs, "node1"));

  SECTION("a certificate from another CA is refused") {
    auto rogue = run_mnist(dir, "coordinator-rogue",
                           with({"--nodes=" + node.address, "--epochs=1"},
                                tls_options(other, "rogue")),
                           exit_timeout);
    expect_refused(rogue, node);
  }
  SECTION("a plaintext coordinator is refused") {
    auto plain = run_mnist(dir, "coordinator-plain", {"--nodes=" + node.address, "--epochs=1"},
                           exit_timeout);
    expect_refused(plain, node);
  }
  SECTION("a coordinator with the cluster CA but no certificate of its own does not start") {
    // Without a certificate there is no mutual TLS: refused before connecting.
    auto half = run_mnist(dir, "coordinator-half",
                          {"--nodes=" + node.address, "--epochs=1",
                           "--tls-ca=" + certs + "/ca.pem"},
                          exit_timeout);
    INFO(half.description);
    REQUIRE(half.status.exited);
    CHECK(half.status.code == 2);
    CHECK(half.err.find("error: ") != std::string::npos);
  }
  // The refused peers did not take the node down: it still trains.
  CLUSTER_REQUIRE(node.proc->running(), node.proc.get());
  auto good = run_mnist(dir, "coordinator",
                        with({"--nodes=" + node.address, "--epochs=1", "--batch-size=32"},
                             tls_options(certs, "coordinator")),
                        run_timeout);
  INFO(good.description << "\n" << node.proc->describe());
  REQUIRE(good.status.exited);
  CHECK(good.status.code == 0);
  CHECK(node.proc->err().find("accepted coordinator") != std::string::npos);
  CHECK(seconds_since(start) < 60);
}

TEST_CASE("a node whose TLS key file is missing exits 2 at startup naming the file",
          "[cluster][tls]") {
  temp_dir dir{"troupe-cluster"};
  const auto certs = make_certs(dir, "cluster", {"node1"});
  const auto missing = certs + "/no-such-node.key";
  process node{{node_binary(), "--port=0", "--tls-cert=" + certs + "/node1.pem",
                "--tls-key=" + missing, "--tls-ca=" + certs + "/ca.pem"},
               dir.path(), "node"};
  const auto status = node.wait(exit_timeout);
  INFO(to_string(status));
  CLUSTER_REQUIRE(status.exited, &node);
  CLUSTER_CHECK(status.code == 2, &node);
  CHECK(status.seconds < 5);
  CLUSTER_CHECK(node.err().find("error: ") != std::string::npos, &node);
  CLUSTER_CHECK(node.err().find(missing) != std::string::npos, &node);
  CLUSTER_CHECK(node.out().find("listening") == std::string::npos, &node);
}
