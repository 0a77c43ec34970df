// Training with the store on the GPU (--store-device=cuda:0) through the
// actor runtime: replicas on the same GPU hand gradients and parameters over
// in device memory. Sync runs are reproducible and do not depend on the
// number of shards; they track the run with the store on the host (the GPU's
// Adam fuses multiply-adds the CPU's does not: adam_drift_bound.cpp).
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include <caf/all.hpp>

#include "actors/run/coordinator.hpp"
#include "messages/register.hpp"
#include "tests/test_slice.hpp"

using namespace troupe;

namespace {

struct gpu_store_config : caf::actor_system_config {
  gpu_store_config() { register_messages(*this); }
};

run_config gpu_run(const std::string& mode, const std::string& store_on, uint32_t shards) {
  run_config o;
  o.policy.name = mode;
  o.replicas = 2;
  o.epochs = 2;
  o.batch_size = 64;
  o.seed = 3;
  o.devices.pool = {"cuda:0"};
  o.store_device = store_on;
  o.store_shards = shards;
  o.step_timeout_ms = 60000;
  return o;
}

} // namespace

TEST_CASE("sync with the store on the gpu: the same bits for 1 and 2 shards and again, "
          "close to the host store",
          "[cuda][store][fit]") {
  gpu_store_config cfg;
  caf::actor_system sys{cfg};
  auto host = run_training(sys, gpu_run("sync", "cpu", 2), shared_test_slice());
  REQUIRE(host);
  auto one = run_training(sys, gpu_run("sync", "cuda:0", 1), shared_test_slice());
  auto two = run_training(sys, gpu_run("sync", "cuda:0", 2), shared_test_slice());
  auto again = run_training(sys, gpu_run("sync", "cuda:0", 2), shared_test_slice());
  REQUIRE(one);
  REQUIRE(two);
  REQUIRE(again);
  CHECK(one->version == host->version);
  CHECK(two->params_fnv1a64 == one->params_fnv1a64);
  CHECK(again->params_fnv1a64 == two->params_fnv1a64);
  CHECK(std::fabs(two->test_accuracy - host->test_accuracy) < 0.03);
  CHECK(two->test_accuracy > 0.6);
}

TEST_CASE("async with the store on the gpu learns, with replicas on the gpu and the cpu",
          "[cuda][store][fit]") {
  gpu_store_config cfg;
  caf::actor_system sys{cfg};
  auto options = gpu_run("async", "cuda:0", 2);
  options.devices.pool = {"cuda:0", "cpu"}; // one hands over on the device, one pushes host gradients
  auto run = run_training(sys, options, shared_test_slice());
  REQUIRE(run);
  CHECK(run->test_accuracy > 0.6);
}
