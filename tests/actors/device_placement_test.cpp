// --devices: replicas take devices round-robin; a device that does not open
// is a clear error before training.
#include <catch2/catch.hpp>

#include <caf/all.hpp>

#include "actors/config/run_options.hpp"
#include "actors/run/coordinator.hpp"
#include "actors/run/run_plan.hpp"
#include "messages/errors.hpp"
#include "messages/register.hpp"
#include "model/backend/backend.hpp"
#include "tests/test_slice.hpp"

using namespace troupe;

// Parses a --devices value that must parse and plans a run of `replicas` on it.
std::vector<std::string> assigned_devices(const std::string& devices, uint32_t replicas) {
  auto choice = parse_devices(devices);
  REQUIRE(choice);
  run_config config;
  config.replicas = replicas;
  config.devices = *choice;
  auto checked = check_run_config(config, &test_slice());
  REQUIRE(checked);
  auto plan = plan_run(*checked, static_cast<size_t>(test_slice().train.count));
  REQUIRE(plan);
  return plan->devices;
}

TEST_CASE("devices are assigned to replicas round-robin", "[placement]") {
  CHECK(assigned_devices("cpu", 3) == std::vector<std::string>{"cpu", "cpu", "cpu"});
  CHECK(assigned_devices("cuda:1,cpu,cuda:0", 5)
        == std::vector<std::string>{"cuda:1", "cpu", "cuda:0", "cuda:1", "cpu"});
}

TEST_CASE("auto takes every GPU that opens and the cpu where none does", "[placement]") {
  auto assigned = assigned_devices("auto", 2);
  if (make_backend("cuda:0")) {
    CHECK(assigned.at(0) == "cuda:0");
  } else {
    CHECK(assigned == std::vector<std::string>{"cpu", "cpu"});
  }
}

TEST_CASE("a device list with a bogus entry is a clear error naming the option",
          "[placement]") {
  auto choice = parse_devices("cpu,tpu:0");
  REQUIRE(choice);
  run_config config;
  config.replicas = 2;
  config.devices = *choice;
  auto checked = check_run_config(config, &test_slice());
  REQUIRE_FALSE(checked);
  CHECK(describe(checked.error()).find("'tpu:0'") != std::string::npos);
  CHECK(describe(checked.error()).find("--devices") != std::string::npos);
  CHECK_FALSE(parse_devices(""));
}

TEST_CASE("a fit on a cuda device that does not open fails before training, naming it",
          "[placement][fit]") {
  if (make_backend("cuda:0")) {
    WARN("a GPU is present: this checks a missing device index instead");
  }
  struct config : caf::actor_system_config {
    config() { register_messages(*this); }
  } cfg;
  caf::actor_system sys{cfg};
  auto data = shared_test_slice();
  run_config options;
  options.replicas = 2;
  options.epochs = 1;
  options.devices.pool = {"cpu", make_backend("cuda:0") ? "cuda:99" : "cuda:0"};
  auto result = run_training(sys, options, data);
  REQUIRE_FALSE(result);
  const auto text = describe(result.error());
  CHECK(text.find("replica 1") != std::string::npos);
  CHECK(text.find("cuda:") != std::string::npos);
}
