// Checkpoints through the real fit(): a run interrupted mid-epoch and resumed
// ends bitwise identical to the uninterrupted run; bad checkpoints are refused.
#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include <unistd.h>

#include <caf/all.hpp>

#include "actors/coordinator.hpp"
#include "messages/errors.hpp"
#include "messages/register.hpp"

using namespace troupe;

namespace {

struct resume_config : caf::actor_system_config {
  resume_config() { register_messages(*this); }
};

std::shared_ptr<const dataset_pair> slice() {
  static auto data = std::make_shared<const dataset_pair>(*load_dataset(TROUPE_TEST_DATA_DIR));
  return data;
}

fit_options small_run(const std::string& checkpoint) {
  fit_options o;
  o.replicas = 2;
  o.epochs = 2;
  o.batch_size = 16;
  o.seed = 11;
  o.checkpoint_path = checkpoint;
  o.step_timeout_ms = 20000;
  return o;
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path()
          / ("troupe_resume_" + std::to_string(::getpid()) + "_" + name))
    .string();
}

} // namespace

TEST_CASE("a sync run interrupted mid-epoch and resumed equals the uninterrupted run",
          "[checkpoint][fit]") {
  resume_config cfg;
  caf::actor_system sys{cfg};
  const auto path = temp_path("mid.ckpt");
  auto uninterrupted = fit(sys, small_run(""), slice());
  REQUIRE(uninterrupted);

  // 125 rounds per epoch; checkpoints every 40; replica 1 dies at its 170th
  // push (round 169 of the run, in epoch 2), so the last checkpoint is round 160.
  auto interrupted_options = small_run(path);
  interrupted_options.checkpoint_every = 40;
  interrupted_options.fail_replica = 1;
  interrupted_options.fail_at_push = 170;
  auto interrupted = fit(sys, interrupted_options, slice());
  REQUIRE_FALSE(interrupted);
  REQUIRE(std::filesystem::exists(path));

  auto resumed_options = small_run(path);
  resumed_options.checkpoint_every = 40;
  resumed_options.resume_path = path;
  auto resumed = fit(sys, resumed_options, slice());
  REQUIRE(resumed);
  CHECK(resumed->version == uninterrupted->version);
  CHECK(resumed->params_fnv1a64 == uninterrupted->params_fnv1a64);
  CHECK(resumed->test_accuracy == uninterrupted->test_accuracy);
  std::filesystem::remove(path);
}

TEST_CASE("a truncated checkpoint is refused with an error naming the file",
          "[checkpoint][fit]") {
  resume_config cfg;
  caf::actor_system sys{cfg};
  const auto path = temp_path("cut.ckpt");
  auto options = small_run(path);
  options.epochs = 1;
  REQUIRE(fit(sys, options, slice()));
  std::filesystem::resize_file(path, std::filesystem::file_size(path) / 2);
  options.resume_path = path;
  auto resumed = fit(sys, options, slice());
  REQUIRE_FALSE(resumed);
  const auto text = describe(resumed.error());
  CHECK(text.find(path) != std::string::npos);
  CHECK(text.find("truncated") != std::string::npos);
  std::filesystem::remove(path);
}

TEST_CASE("a checkpoint of another model or other settings is refused",
          "[checkpoint][fit]") {
  resume_config cfg;
  caf::actor_system sys{cfg};
  const auto path = temp_path("other.ckpt");
  auto options = small_run(path);
  options.epochs = 1;
  REQUIRE(fit(sys, options, slice()));

  auto other_model = options;
  other_model.model = "784-64relu-10";
  other_model.resume_path = path;
  auto refused_model = fit(sys, other_model, slice());
  REQUIRE_FALSE(refused_model);
  CHECK(describe(refused_model.error()).find("784-128relu-10") != std::string::npos);

  auto other_seed = options;
  other_seed.seed = 12;
  other_seed.resume_path = path;
  auto refused_seed = fit(sys, other_seed, slice());
  REQUIRE_FALSE(refused_seed);
  CHECK(describe(refused_seed.error()).find(path) != std::string::npos);
  std::filesystem::remove(path);
}
