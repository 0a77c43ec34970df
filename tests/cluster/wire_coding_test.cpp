// The wire's lossless codings between processes (messages/coded_traffic.hpp):
// answers that cross the network come coded against the version the
// replica holds, and pushes with their zeros as a mask. The run keeps the
// bits of one process and of whole answers and pushes for fp32, bf16 and
// int8 (whose pushes are never masked), with 1 shard per node and 3 over 2
// nodes; the codings are smaller than the values; nothing through
// shared-memory lanes is coded; and a node killed mid-run does not break
// them (its replica's new actor holds no base and takes whole answers first).
// With --pushes-ahead a slice for a shard in another process leaves as soon
// as the model has written it (counted as pushes_ahead), with the bits of
// pushes at the end.
#include "tests/cluster/cluster_test.hpp"
#include "tests/cluster/respawn_runs.hpp"

using namespace troupe::cluster_test;

namespace {

// Sums an epoch field over a run's epoch records.
uint64_t epoch_sum(const std::vector<nlohmann::json>& metrics, const char* field) {
  uint64_t sum = 0;
  for (const auto& epoch : records_of(metrics, "epoch"))
    sum += epoch[field].get<uint64_t>();
  return sum;
}

// Two nodes that take no shared-memory lanes: every push and answer
// crosses a socket.
struct socket_nodes {
  node_process a, b;

  explicit socket_nodes(const temp_dir& dir)
    : a(start_node(dir, "node-a", {"--no-host-lanes"})),
      b(start_node(dir, "node-b", {"--no-host-lanes"})) {}

  std::string option() const { return "--nodes=" + a.address + "," + b.address; }
};

} // namespace

TEST_CASE("coded answers and masked pushes keep the bits of one process and of whole answers "
          "and pushes, and are smaller",
          "[cluster][sync][wire][delta][bits]") {
  temp_dir dir{"troupe-cluster"};
  const socket_nodes sockets(dir);
  const std::string nodes = sockets.option();
  for (const std::string wire : {"fp32", "bf16", "int8"}) {
    INFO(wire);
    const std::vector<std::string> on_nodes{"--wire=" + wire, nodes, "--replicas-per-node=1"};
    auto with = [&](std::vector<std::string> more) {
      more.insert(more.end(), on_nodes.begin(), on_nodes.end());
      return codec_run(more);
    };
    const auto here = checksum_of_run(dir, wire + "-here",
                                      codec_run({"--wire=" + wire, "--replicas=2"}));
    const auto coded = run_to_success(dir, wire + "-coded", with({"--pushes-ahead"}));
    const auto whole =
      run_to_success(dir, wire + "-whole", with({"--whole-answers", "--whole-pushes"}));
    const auto three = run_to_success(dir, wire + "-three", with({"--store-shards=3"}));
    for (const auto* run : {&coded, &whole, &three})
      CHECK(final_record_of(*run)["params_fnv1a64"].get<std::string>() == here);
    // A replica asks from its second round on, and a shard codes against the
    // versions it kept from the first ask on.
    CHECK(epoch_sum(coded.metrics, "delta_answers") > 0);
    CHECK(epoch_sum(three.metrics, "delta_answers") > epoch_sum(coded.metrics, "delta_answers"));
    CHECK(epoch_sum(whole.metrics, "delta_answers") == 0);
    CHECK(epoch_sum(coded.metrics, "delta_answer_bytes")
          < epoch_sum(coded.metrics, "delta_answer_whole_bytes"));
    // Every push but a short last round's holds zeros (inputs zero in every
    // sample of the batch); int8's blocks are left as they are.
    CHECK(epoch_sum(whole.metrics, "masked_pushes") == 0);
    CHECK(epoch_sum(three.metrics, "pushes_ahead") == 0); // only with --pushes-ahead
    if (wire == "int8") {
      CHECK(epoch_sum(coded.metrics, "masked_pushes") == 0);
      CHECK(epoch_sum(coded.metrics, "pushes_ahead") == 0);
      continue;
    }
    // Each replica sends the other node's shard its slice while it computes.
    CHECK(epoch_sum(coded.metrics, "pushes_ahead") > 0);
    CHECK(epoch_sum(coded.metrics, "pushes_ahead") == epoch_sum(coded.metrics, "masked_pushes"));
    CHECK(epoch_sum(coded.metrics, "masked_pushes") > 0);
    CHECK(epoch_sum(three.metrics, "masked_pushes") > epoch_sum(coded.metrics, "masked_pushes"));
    CHECK(epoch_sum(coded.metrics, "masked_push_bytes")
          < epoch_sum(coded.metrics, "masked_push_whole_bytes"));
  }
}

TEST_CASE("answers and pushes through shared-memory lanes travel whole, with the same bits",
          "[cluster][sync][wire][delta][lanes][bits]") {
  temp_dir dir{"troupe-cluster"};
  auto a = start_node(dir, "node-a");
  auto b = start_node(dir, "node-b");
  const auto here = checksum_of_run(dir, "here", codec_run({"--wire=bf16", "--replicas=2"}));
  const auto lanes = run_to_success(
    dir, "lanes",
    codec_run({"--wire=bf16", "--nodes=" + a.address + "," + b.address,
               "--replicas-per-node=1", "--pushes-ahead"}));
  CHECK(final_record_of(lanes)["params_fnv1a64"].get<std::string>() == here);
  CHECK(epoch_sum(lanes.metrics, "delta_answers") == 0);
  CHECK(epoch_sum(lanes.metrics, "masked_pushes") == 0);
  CHECK(epoch_sum(lanes.metrics, "pushes_ahead") == 0);
  for (auto* node : {&a, &b})
    CLUSTER_CHECK(node->proc->err().find("a shared-memory lane to another process of this host "
                                         "is open")
                    != std::string::npos,
                  node->proc.get());
}

TEST_CASE("a run with coded answers, masked pushes and slices sent ahead whose node is killed "
          "mid-run respawns the replica and ends with the bits of one process",
          "[cluster][wire][delta][kill][respawn]") {
  using namespace troupe::respawn_runs;
  temp_dir dir{"troupe-cluster"};
  const auto metrics =
    metrics_of_killed_node_run(dir, {"--wire=bf16", "--pushes-ahead"}, {"--no-host-lanes"});
  CHECK(epoch_sum(metrics, "delta_answers") > 0);
  CHECK(epoch_sum(metrics, "masked_pushes") > 0);
  CHECK(epoch_sum(metrics, "pushes_ahead") > 0);
  expect_local_bits(dir, 2, dir.file("coordinator.jsonl"), {"--wire=bf16"});
}

TEST_CASE("a convnet's slices sent while it computes keep the bits of one process and of "
          "pushes at the end",
          "[cluster][sync][wire][ahead][convnet][bits]") {
  temp_dir dir{"troupe-cluster"};
  const socket_nodes sockets(dir);
  const std::string model =
    "--model=28x28x1-conv4k3relu-maxpool2-conv8k3-batchnorm-relu-maxpool2-flatten-dropout0.5-10";
  const auto here = checksum_of_run(dir, "here", codec_run({model, "--replicas=2"}));
  auto on_nodes = [&](const std::string& name, std::vector<std::string> more) {
    more.insert(more.end(),
                {model, sockets.option(), "--replicas-per-node=1", "--store-shards=4"});
    return run_to_success(dir, name, codec_run(more));
  };
  const auto ahead = on_nodes("ahead", {"--pushes-ahead"});
  const auto at_end = on_nodes("at-end", {});
  CHECK(final_record_of(ahead)["params_fnv1a64"].get<std::string>() == here);
  CHECK(final_record_of(at_end)["params_fnv1a64"].get<std::string>() == here);
  // Two of the four shards are on the other node of each replica.
  CHECK(epoch_sum(ahead.metrics, "pushes_ahead") == epoch_sum(ahead.metrics, "masked_pushes"));
  CHECK(epoch_sum(ahead.metrics, "pushes_ahead") > 0);
  CHECK(epoch_sum(at_end.metrics, "pushes_ahead") == 0);
}

TEST_CASE("slices sent ahead under async, ssp and delayed train on two nodes",
          "[cluster][wire][ahead][modes]") {
  temp_dir dir{"troupe-cluster"};
  const socket_nodes sockets(dir);
  const std::vector<std::vector<std::string>> modes{
    {"--mode=async"}, {"--mode=ssp", "--staleness=2"}, {"--mode=delayed", "--staleness=1"}};
  for (const auto& mode : modes) {
    std::vector<std::string> args{"--epochs=1", "--batch-size=32", "--seed=4", sockets.option(),
                                  "--replicas-per-node=1", "--pushes-ahead"};
    args.insert(args.end(), mode.begin(), mode.end());
    const auto run = run_to_success(dir, mode.front().substr(7), args);
    CHECK(epoch_sum(run.metrics, "pushes_ahead") > 0);
    CHECK(final_record_of(run)["test_accuracy"].get<double>() > 0.5);
  }
}
