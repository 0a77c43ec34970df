// The bits of a sync run do not depend on which GEMM kernel each node runs,
// as long as the kernels share a family, for the MLP and for a convolutional
// network; nodes of another family are refused at connect (both sides say
// why), and async runs accept them.
#include "tests/cluster/cluster_test.hpp"

#include <cstdio>

#include "model/backend/cpu/gemm/gemm.hpp"

using namespace troupe::cluster_test;

namespace {

// Tells whether this CPU runs both fused kernels the test pins the nodes to.
bool has_two_fused_kernels() {
  size_t usable = 0;
  for (const auto& kernel : troupe::gemm_kernels())
    if ((kernel.name == "avx2" || kernel.name == "fma128") && kernel.verified)
      ++usable;
  return usable == 2;
}

// Says so and returns true when this CPU cannot run the two fused kernels.
bool skipped_without_two_fused_kernels() {
  if (has_two_fused_kernels())
    return false;
  std::printf("troupe-test-skipped: this CPU lacks AVX2 + FMA, so avx2 and fma128 cannot "
              "both run\n");
  return true;
}

} // namespace

TEST_CASE("sync training on nodes pinned to different kernels of one family matches a "
          "local run bit for bit",
          "[cluster][sync][placement][gemm]") {
  if (skipped_without_two_fused_kernels())
    return;
  temp_dir dir{"troupe-cluster"};
  auto a = start_node(dir, "node-avx2", {"--gemm-kernel=avx2"});
  auto b = start_node(dir, "node-fma128", {"--gemm-kernel=fma128"});
  const std::vector<std::string> common{"--mode=sync", "--epochs=1", "--batch-size=32",
                                        "--seed=99"};
  auto distributed_args = common;
  distributed_args.push_back("--nodes=" + a.address + "," + b.address);
  distributed_args.push_back("--replicas-per-node=1");
  auto distributed = run_mnist(dir, "coordinator", distributed_args, run_timeout);
  auto local_args = common;
  local_args.push_back("--replicas=2");
  local_args.push_back("--gemm-kernel=avx2");
  auto local = run_mnist(dir, "local", local_args, run_timeout);
  INFO(distributed.description << "\n" << local.description);
  REQUIRE(distributed.status.exited);
  REQUIRE(distributed.status.code == 0);
  REQUIRE(local.status.exited);
  REQUIRE(local.status.code == 0);
  CLUSTER_CHECK(a.proc->out().find("GEMM kernel avx2 (fused") != std::string::npos,
                a.proc.get());
  CLUSTER_CHECK(b.proc->out().find("GEMM kernel fma128 (fused") != std::string::npos,
                b.proc.get());
  auto distributed_final = records_of(distributed.metrics, "final");
  auto local_final = records_of(local.metrics, "final");
  REQUIRE(distributed_final.size() == 1);
  REQUIRE(local_final.size() == 1);
  CHECK(distributed_final[0]["params_fnv1a64"] == local_final[0]["params_fnv1a64"]);
  CHECK(local_final[0]["gemm_kernel"] == "avx2");
  CHECK(local_final[0]["gemm_family"] == "fused");
  // The final line shows the kernel beside the checksum.
  CHECK(local.out.find("params fnv1a64 "
                       + local_final[0]["params_fnv1a64"].get<std::string>()
                       + " (GEMM avx2, fused)")
        != std::string::npos);
}

TEST_CASE("a sync convnet on nodes pinned to different kernels of one family matches a local "
          "run bit for bit",
          "[cluster][sync][placement][gemm][convnet]") {
  if (skipped_without_two_fused_kernels())
    return;
  temp_dir dir{"troupe-cluster"};
  auto a = start_node(dir, "node-avx2", {"--gemm-kernel=avx2"});
  auto b = start_node(dir, "node-fma128", {"--gemm-kernel=fma128"});
  const std::vector<std::string> common{
    "--mode=sync", "--epochs=1", "--batch-size=64", "--seed=5",
    "--model=28x28x1-conv4k3relu-maxpool2-conv8k3samerelu-avgpool2-flatten-dropout0.3-16gelu-10"};
  auto with = [&common](std::vector<std::string> more) {
    more.insert(more.begin(), common.begin(), common.end());
    return more;
  };
  const auto distributed = checksum_of_run(
    dir, "coordinator", with({"--nodes=" + a.address + "," + b.address, "--replicas-per-node=1"}));
  const auto local =
    checksum_of_run(dir, "local", with({"--replicas=2", "--gemm-kernel=avx2"}));
  CHECK(distributed == local);
}

TEST_CASE("a sync run refuses a node whose kernel computes other bits, naming both, and async "
          "takes it",
          "[cluster][sync][handshake][gemm]") {
  if (!has_two_fused_kernels()) {
    std::printf("troupe-test-skipped: this CPU has no fused kernel to compare with\n");
    return;
  }
  temp_dir dir{"troupe-cluster"};
  auto node = start_node(dir, "node-portable", {"--gemm-kernel=portable"});
  auto sync = run_mnist(dir, "coordinator-sync",
                        {"--nodes=" + node.address, "--epochs=1", "--mode=sync",
                         "--gemm-kernel=avx2"},
                        exit_timeout);
  {
    INFO(sync.description);
    REQUIRE(sync.status.exited);
    CHECK(sync.status.code == 1);
    CHECK(sync.err.find("error: handshake with node " + node.address) != std::string::npos);
    // Whichever side refuses first, the message names both kernels.
    CHECK(sync.err.find("computes other bits") != std::string::npos);
    CHECK(sync.err.find("(kernel portable)") != std::string::npos);
    CHECK(sync.err.find("(kernel avx2)") != std::string::npos);
    CHECK(records_of(sync.metrics, "epoch").empty());
  }
  auto refused = node.proc->wait_for_line(stream::err, "refused coordinator", notice_timeout);
  CLUSTER_REQUIRE(refused, node.proc.get());
  CHECK(refused->find("GEMM family fused (kernel avx2) vs unfused (kernel portable)")
        != std::string::npos);
  CLUSTER_CHECK(node.proc->out().find("GEMM kernel portable (unfused") != std::string::npos,
                node.proc.get());

  auto async = run_mnist(dir, "coordinator-async",
                         {"--nodes=" + node.address, "--epochs=1", "--mode=async",
                          "--gemm-kernel=avx2"},
                         run_timeout);
  INFO(async.description);
  REQUIRE(async.status.exited);
  CHECK(async.status.code == 0);
  CHECK(records_of(async.metrics, "final").size() == 1);
}
