// --wire=bf16 and --wire=fp16 are part of the run's math: a sync run has the
// same bits in one process with 1 and 3 store shards and on two node
// processes (its slices crossing between them in 16 bits), differs from
// fp32's, still learns, and keeps its bits when a node dies mid-run.
#include "tests/cluster/cluster_test.hpp"
#include "tests/cluster/respawn_runs.hpp"

using namespace troupe::cluster_test;

TEST_CASE("bf16 and fp16 sync runs have the same bits for 1 and 3 store shards and on two "
          "nodes, and not fp32's",
          "[cluster][sync][wire][bits]") {
  temp_dir dir{"troupe-cluster"};
  auto a = start_node(dir, "node-a");
  auto b = start_node(dir, "node-b");
  const auto fp32 = checksum_of_run(dir, "fp32", codec_run({"--replicas=2", "--store-shards=1"}));
  for (const std::string codec : {"bf16", "fp16"}) {
    const std::string wire = "--wire=" + codec;
    const auto one_shard =
      checksum_of_run(dir, codec + "-one-shard", codec_run({wire, "--replicas=2", "--store-shards=1"}));
    const auto three_shards = checksum_of_run(
      dir, codec + "-three-shards", codec_run({wire, "--replicas=2", "--store-shards=3"}));
    // The store's shards on the nodes too: slices cross between the two.
    const auto on_nodes = checksum_of_run(
      dir, codec + "-on-nodes",
      codec_run({wire, "--nodes=" + a.address + "," + b.address, "--replicas-per-node=1"}));
    INFO(codec);
    CHECK(three_shards == one_shard);
    CHECK(on_nodes == one_shard);
    CHECK(one_shard != fp32);
  }
}

TEST_CASE("a bf16 MLP learns as an fp32 one does in 2 epochs on the test slice",
          "[cluster][wire][accuracy]") {
  temp_dir dir{"troupe-cluster"};
  const std::vector<std::string> args{"--epochs=2", "--replicas=2", "--seed=5"};
  auto bf16_args = args;
  bf16_args.push_back("--wire=bf16");
  const double fp32 = final_test_accuracy(dir, "fp32", args);
  const double bf16 = final_test_accuracy(dir, "bf16", bf16_args);
  INFO("test accuracy: fp32 " << fp32 << ", bf16 " << bf16);
  CHECK(fp32 > 0.6);
  CHECK(bf16 > fp32 - 0.03);
}

TEST_CASE("a bf16 run resumed from its checkpoint of fp32 masters keeps the bits",
          "[cluster][sync][wire][checkpoint]") {
  temp_dir dir{"troupe-cluster"};
  const std::vector<std::string> run{"--mode=sync", "--replicas=2", "--batch-size=64",
                                     "--seed=3", "--wire=bf16"};
  const std::string file = dir.file("bf16.ck");
  expect_resume_keeps_bits(dir, run, file);
  // The codec is among the settings the checkpoint records.
  auto other = run_mnist(dir, "other-codec",
                         {"--mode=sync", "--replicas=2", "--batch-size=64", "--seed=3",
                          "--epochs=2", "--resume=" + file}, run_timeout);
  INFO(other.description);
  CHECK(other.status.code != 0);
  CHECK_THAT(other.err, Catch::Contains("--wire=bf16 there, not set here"));
}

TEST_CASE("a bf16 sync run whose node is killed mid-run respawns the replica and ends with "
          "the bits of one process",
          "[cluster][wire][kill][respawn]") {
  using namespace troupe::respawn_runs;
  temp_dir dir{"troupe-cluster"};
  metrics_of_killed_node_run(dir, {"--wire=bf16"});
  expect_local_bits(dir, 2, dir.file("coordinator.jsonl"), {"--wire=bf16"});
}
