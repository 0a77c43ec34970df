// A coordinator stopped by SIGTERM or SIGINT mid-run: it closes the open
// round, writes its checkpoint, says where, exits 143 or 130 within seconds,
// and the run resumed from that checkpoint ends with the bits of a run never
// stopped; here and with its store and replicas on two nodes.
#include "tests/cluster/cluster_test.hpp"

#include <filesystem>

#include "tests/cluster/respawn_runs.hpp"

using namespace troupe::cluster_test;
using troupe::respawn_runs::final_checksum;

namespace {

// A slow replica makes an epoch of the test slice last about a second, so
// the signal lands mid-epoch; it slows the replica's compute only.
std::vector<std::string> stop_run_args(std::vector<std::string> more) {
  std::vector<std::string> args{"--epochs=3", "--batch-size=8", "--replicas=2"};
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

// Runs to the end; its final checksum.
std::string checksum_of(const temp_dir& dir, const std::string& name,
                        std::vector<std::string> args) {
  auto run = run_mnist(dir, name, stop_run_args(std::move(args)), run_timeout);
  INFO(run.description);
  REQUIRE(run.status.exited);
  REQUIRE(run.status.code == 0);
  return final_checksum(run.metrics);
}

// Starts a run, signals it mid-epoch 2, and checks how it stops.
void stop_mid_run(const temp_dir& dir, const std::string& name, std::vector<std::string> args,
                  int signal_number) {
  process coordinator{mnist_command(stop_run_args(std::move(args))), dir.path(), name};
  CLUSTER_REQUIRE(coordinator.wait_for_line(stream::out, "Epoch 1/3", line_timeout),
                  &coordinator);
  std::this_thread::sleep_for(milliseconds{300});
  coordinator.send(signal_number);
  const auto status = coordinator.wait(milliseconds{5000});
  INFO(to_string(status));
  CLUSTER_REQUIRE(status.exited, &coordinator);
  CLUSTER_CHECK(status.code == 128 + signal_number, &coordinator);
  CLUSTER_CHECK(coordinator.err().find("troupe mnist: stopped at store round")
                  != std::string::npos,
                &coordinator);
  CLUSTER_CHECK(coordinator.err().find("in epoch 2 of 3") != std::string::npos, &coordinator);
}

} // namespace

TEST_CASE("SIGTERM to a coordinator mid-run writes the checkpoint of the open round and exits "
          "143, and the resumed run keeps the bits of a run never stopped",
          "[cluster][stop]") {
  temp_dir dir{"troupe-cluster"};
  const auto checkpoint = dir.file("stopped.troupe");
  const std::string slow = "--slow-replica=0:100";
  const auto never_stopped = checksum_of(dir, "never-stopped", {slow});
  stop_mid_run(dir, "stopped", {slow, "--checkpoint=" + checkpoint}, SIGTERM);
  REQUIRE(std::filesystem::exists(checkpoint));
  CHECK(checksum_of(dir, "resumed", {slow, "--resume=" + checkpoint}) == never_stopped);
}

TEST_CASE("SIGINT to a coordinator whose store and replicas are on two nodes stops them at "
          "one round, exits 130, and the resumed run keeps the bits",
          "[cluster][stop]") {
  temp_dir dir{"troupe-cluster"};
  auto first = start_node(dir, "node-a", {"--slow-replica=0:100"});
  auto second = start_node(dir, "node-b", {"--slow-replica=0:100"});
  const std::vector<std::string> nodes{"--nodes=" + first.address + "," + second.address,
                                       "--replicas-per-node=1"};
  const auto checkpoint = dir.file("stopped.troupe");
  const auto never_stopped = checksum_of(dir, "never-stopped", nodes);
  auto stopped = nodes;
  stopped.push_back("--checkpoint=" + checkpoint);
  stop_mid_run(dir, "stopped", stopped, SIGINT);
  REQUIRE(std::filesystem::exists(checkpoint));
  auto resumed = nodes;
  resumed.push_back("--resume=" + checkpoint);
  CHECK(checksum_of(dir, "resumed", resumed) == never_stopped);
  // The nodes stopped the job's replicas and serve on.
  CLUSTER_CHECK(first.proc->running(), first.proc.get());
  CLUSTER_CHECK(second.proc->running(), second.proc.get());
}
