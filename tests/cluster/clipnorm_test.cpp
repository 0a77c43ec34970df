// Clipping by global norm in real runs: sync keeps its bits across store
// shard counts and placement (the shards exchange their sums of squares),
// async clips each push by the norm its replica computed (options_test.cpp
// has the refused values).
#include "tests/cluster/cluster_test.hpp"

using namespace troupe::cluster_test;

namespace {

// Runs mnist with `args`, requires a clean exit and returns its run.
run_result clean_run(const temp_dir& dir, const std::string& name,
                     const std::vector<std::string>& args) {
  auto run = run_mnist(dir, name, args, run_timeout);
  INFO(run.description);
  REQUIRE(run.status.exited);
  REQUIRE(run.status.code == 0);
  return run;
}

std::string final_checksum(const run_result& run) {
  const auto final_record = records_of(run.metrics, "final");
  REQUIRE(final_record.size() == 1);
  return final_record[0]["params_fnv1a64"].get<std::string>();
}

} // namespace

TEST_CASE("a sync run with global_clipnorm has the same bits for 1, 2 and 3 store shards and "
          "on two nodes, and the clip changes them",
          "[cluster][sync][optimizer][clipnorm][bits]") {
  const auto start = clock_type::now();
  temp_dir dir{"troupe-cluster"};
  const std::vector<std::string> common{"--mode=sync",   "--epochs=1",  "--batch-size=32",
                                        "--seed=17",     "--optimizer=sgd", "--lr=0.05",
                                        "--momentum=0.9"};
  auto with = [&common](std::vector<std::string> more) {
    more.insert(more.begin(), common.begin(), common.end());
    return more;
  };
  const std::string clip = "--global-clipnorm=0.5"; // below the norms of this run's gradients
  const auto one_shard =
    final_checksum(clean_run(dir, "one", with({clip, "--replicas=2", "--store-shards=1"})));
  const auto two_shards =
    final_checksum(clean_run(dir, "two", with({clip, "--replicas=2", "--store-shards=2"})));
  const auto three_shards =
    final_checksum(clean_run(dir, "three", with({clip, "--replicas=2", "--store-shards=3"})));
  auto a = start_node(dir, "node-a");
  auto b = start_node(dir, "node-b");
  const auto on_nodes = final_checksum(clean_run(
    dir, "on-nodes",
    with({clip, "--nodes=" + a.address + "," + b.address, "--replicas-per-node=1"})));
  CHECK(two_shards == one_shard);
  CHECK(three_shards == one_shard);
  CHECK(on_nodes == one_shard);
  // Each node stepped one of two shards, which exchanged their sums.
  CLUSTER_CHECK(a.proc->wait_for_line(stream::err, "variable store shard 0 of 2 (sync, sgd)",
                                      notice_timeout),
                a.proc.get());
  CLUSTER_CHECK(b.proc->wait_for_line(stream::err, "variable store shard 1 of 2 (sync, sgd)",
                                      notice_timeout),
                b.proc.get());
  // The clip is active: without it the bits differ.
  CHECK(final_checksum(clean_run(dir, "no-clip", with({"--replicas=2", "--store-shards=2"})))
        != one_shard);
  CHECK(seconds_since(start) < 120);
}

TEST_CASE("an async run with global_clipnorm clips each push by its replica's norm and "
          "trains",
          "[cluster][async][optimizer][clipnorm]") {
  temp_dir dir{"troupe-cluster"};
  const std::vector<std::string> args{"--mode=async", "--epochs=2", "--batch-size=32",
                                      "--seed=5", "--replicas=2", "--store-shards=2",
                                      "--optimizer=sgd", "--lr=0.1", "--global-clipnorm=0.5"};
  const auto run = clean_run(dir, "async-clip", args);
  const auto epochs = records_of(run.metrics, "epoch");
  REQUIRE(epochs.size() == 2);
  CHECK(epochs[1]["loss"].get<double>() < epochs[0]["loss"].get<double>());
  CHECK(epochs[1]["loss"].get<double>() < 2.0); // below chance's log(10) = 2.30
  CHECK(records_of(run.metrics, "final")[0]["test_accuracy"].get<double>() > 0.5);
}
