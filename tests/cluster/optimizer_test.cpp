// The optimizers and schedules in real runs: AdamW with weight decay under a
// cosine warm-up, SGD with Nesterov momentum and weight decay under a step
// decay, centered RMSprop with momentum under a staircase exponential decay
// each keep sync's bits across store shard counts and placement
// (options_test.cpp has their refused values).
#include "tests/cluster/cluster_test.hpp"

using namespace troupe::cluster_test;

TEST_CASE("a sync run of adamw with weight decay and a cosine warm-up has the same bits for 1 "
          "and 3 store shards and on two nodes",
          "[cluster][sync][optimizer][lr-schedule][bits]") {
  const auto start = clock_type::now();
  temp_dir dir{"troupe-cluster"};
  // 2 epochs of 63 rounds: 20 rounds climb to 0.003, 100 decay to 0.0003.
  const std::vector<std::string> common{
    "--mode=sync", "--epochs=2", "--batch-size=32", "--seed=31", "--optimizer=adamw",
    "--weight-decay=0.05", "--lr=0",
    "--lr-schedule=cosine:decay_steps=100,alpha=0.1,warmup_steps=20,warmup_target=0.003"};
  auto with = [&common](std::vector<std::string> more) {
    more.insert(more.begin(), common.begin(), common.end());
    return more;
  };
  const auto one_shard =
    checksum_of_run(dir, "one-shard", with({"--replicas=2", "--store-shards=1"}));
  const auto three_shards =
    checksum_of_run(dir, "three-shards", with({"--replicas=2", "--store-shards=3"}));
  auto a = start_node(dir, "node-a");
  auto b = start_node(dir, "node-b");
  const auto on_nodes = checksum_of_run(
    dir, "on-nodes", with({"--nodes=" + a.address + "," + b.address, "--replicas-per-node=1"}));
  CHECK(three_shards == one_shard);
  CHECK(on_nodes == one_shard);
  // The nodes built their store shards from the settings that crossed the wire.
  CLUSTER_CHECK(a.proc->wait_for_line(stream::err, "variable store shard 0 of 2 (sync, adamw)",
                                      notice_timeout),
                a.proc.get());
  // The decay is part of the step: without it the bits differ.
  auto no_decay = with({"--replicas=2", "--store-shards=1"});
  no_decay.push_back("--weight-decay=0");
  CHECK(checksum_of_run(dir, "no-decay", no_decay) != one_shard);
  CHECK(seconds_since(start) < 120);
}

TEST_CASE("sync runs of sgd and rmsprop with weight decay under step and exponential decay "
          "have the same bits for 1 and 3 store shards and on two nodes",
          "[cluster][sync][optimizer][lr-schedule][bits]") {
  temp_dir dir{"troupe-cluster"};
  const std::vector<std::vector<std::string>> runs{
    {"--optimizer=sgd", "--lr=0.05", "--momentum=0.9", "--nesterov", "--weight-decay=0.01",
     "--lr-schedule=step:every=40,factor=0.5"},
    {"--optimizer=rmsprop", "--lr=0.002", "--momentum=0.5", "--centered", "--rho=0.8",
     "--weight-decay=0.02", "--lr-schedule=exponential:decay_steps=30,decay_rate=0.7,staircase"},
  };
  auto a = start_node(dir, "node-a");
  auto b = start_node(dir, "node-b");
  for (const auto& optimizer : runs) {
    INFO(optimizer.front());
    std::vector<std::string> common{"--mode=sync", "--epochs=2", "--batch-size=32",
                                    "--seed=31"};
    common.insert(common.end(), optimizer.begin(), optimizer.end());
    auto with = [&common](std::vector<std::string> more) {
      more.insert(more.begin(), common.begin(), common.end());
      return more;
    };
    const std::string name = optimizer.front().substr(12); // after "--optimizer="
    const auto one_shard =
      checksum_of_run(dir, name + "-one-shard", with({"--replicas=2", "--store-shards=1"}));
    const auto three_shards =
      checksum_of_run(dir, name + "-three-shards", with({"--replicas=2", "--store-shards=3"}));
    const auto on_nodes =
      checksum_of_run(dir, name + "-on-nodes",
                     with({"--nodes=" + a.address + "," + b.address, "--replicas-per-node=1"}));
    CHECK(three_shards == one_shard);
    CHECK(on_nodes == one_shard);
  }
}
