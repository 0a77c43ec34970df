// --wire=int8 through the real fit(): a periodic checkpoint, cut mid-epoch
// by the shards, keeps every replica's error-feedback residual (the pushes
// after the cut carry them), so a run interrupted mid-epoch and resumed from
// it ends with the bits of the run never interrupted, for 1 and 3 shards.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>

#include <caf/all.hpp>

#include "actors/run/coordinator.hpp"
#include "messages/register.hpp"
#include "model/checkpoint.hpp"
#include "tests/actors/checkpoint_checks.hpp"
#include "tests/actors/failing_backend.hpp"
#include "tests/test_slice.hpp"

using namespace troupe;

namespace {

struct int8_checkpoint_config : caf::actor_system_config {
  int8_checkpoint_config() { register_messages(*this); }
};

run_config int8_run(const std::string& checkpoint, uint32_t shards) {
  auto o = testing::small_checkpointed_run(checkpoint);
  o.store_shards = shards;
  o.wire = float_codec::int8;
  return o;
}

} // namespace

TEST_CASE("an int8 run resumed from a periodic checkpoint goes on with every replica's residual "
          "and ends with the uninterrupted run's bits, for 1 and 3 shards",
          "[checkpoint][fit][wire][int8]") {
  int8_checkpoint_config cfg;
  caf::actor_system sys{cfg};
  const uint32_t shards = GENERATE(1u, 3u);
  INFO(shards << " store shards");
  const auto path = testing::temp_checkpoint_path("int8", std::to_string(shards) + ".ckpt");
  auto uninterrupted = run_training(sys, int8_run("", shards), shared_test_slice());
  REQUIRE(uninterrupted);

  // 125 rounds an epoch: checkpoints at 40, 80, 120, the epoch's end and
  // 165; replica 1 dies at round 169, so the last one is of round 165.
  auto interrupted_options = int8_run(path, shards);
  interrupted_options.checkpoint_every = 40;
  testing::fail_replica_at_push(interrupted_options, 1, 170);
  REQUIRE_FALSE(run_training(sys, interrupted_options, shared_test_slice()));
  auto saved = read_checkpoint(path);
  REQUIRE(saved);
  CHECK_FALSE(saved->epoch_complete);
  CHECK(saved->round == 165);
  REQUIRE(saved->residuals.size() == 2 * saved->params.size());
  const auto nonzero = [](float x) { return x != 0.0f; };
  CHECK(std::any_of(saved->residuals.begin(), saved->residuals.end(), nonzero));
  // The replicas' residuals differ: each is its own.
  const auto half = saved->residuals.begin() + static_cast<std::ptrdiff_t>(saved->params.size());
  CHECK_FALSE(std::equal(saved->residuals.begin(), half, half));

  auto resumed_options = int8_run(path, shards);
  resumed_options.checkpoint_every = 40;
  testing::check_resumes_to(sys, resumed_options, path, *uninterrupted);
  std::filesystem::remove(path);
}
