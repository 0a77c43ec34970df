// Whole fits on real threads over the Fashion-MNIST slice in tests/data
// across the consistency dial: ssp, staleness-aware async, backup replicas,
// delayed rounds, losses at every point of the dial, and bad options.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include <unistd.h>

#include "actors/run/coordinator.hpp"
#include "actors/runtime/core_pinning.hpp"
#include "messages/errors.hpp"
#include "messages/register.hpp"
#include "tests/actors/failing_backend.hpp"
#include "tests/actors/fit_fixture.hpp"
#include "tests/test_slice.hpp"

using namespace troupe;
using namespace troupe::testing;

TEST_CASE("fit refuses options that make no sense with clear errors", "[fit][config]") {
  auto expect_bad_config = [](const run_config& options, const std::string& words) {
    auto summary = run_fit(options);
    REQUIRE_FALSE(summary);
    const auto text = describe(summary.error());
    INFO(text);
    CHECK(summary.error().category() == caf::atom("troupe"));
    CHECK(summary.error().code() == static_cast<uint8_t>(troupe_errc::bad_config));
    CHECK(text.find(words) != std::string::npos);
  };
  auto bogus_mode = small_options("bogus", 2, 32);
  expect_bad_config(bogus_mode, "bogus");
  auto tiny_batch = small_options("sync", 4, 3);
  expect_bad_config(tiny_batch, "smaller than --replicas");
  auto bad_model = small_options("sync", 2, 32);
  bad_model.model = "784-32relu-7"; // 7 classes; the data has 10
  expect_bad_config(bad_model, "but model 784-32relu-7 has 7 outputs: labels must lie in 0..6");
  auto bad_device = small_options("sync", 2, 32);
  bad_device.devices.pool = {"cpu", "tpu:0"};
  expect_bad_config(bad_device, "--devices: 'tpu:0' is not a device");
  auto async_backups = small_options("async", 3, 32);
  async_backups.policy.settings.backup_replicas = 1;
  expect_bad_config(async_backups, "--backup-replicas=1 works with --mode=sync, not async");
  auto all_backups = small_options("sync", 2, 32);
  all_backups.policy.settings.backup_replicas = 2;
  expect_bad_config(all_backups, "leaves no replica");
  auto sync_staleness = small_options("sync", 2, 32);
  sync_staleness.policy.settings.staleness = 3;
  expect_bad_config(sync_staleness, "--staleness=3 works with --mode=ssp or delayed, not sync");
  auto slow_missing = small_options("sync", 2, 32);
  slow_missing.slow = slow_replica{2, 3.0f};
  expect_bad_config(slow_missing, "replica 2 does not exist");
  auto sync_lr = small_options("sync", 2, 32);
  sync_lr.policy.settings.staleness_lr = staleness_lr_rule::inverse;
  expect_bad_config(sync_lr, "--staleness-lr=inverse works with --mode=async or ssp, not sync");
  auto too_many_shards = small_options("sync", 2, 32);
  too_many_shards.store_shards = 100000;
  expect_bad_config(too_many_shards, "--store-shards: 100000 store shards are too many");
  auto too_many_replicas = small_options("sync", 4, 32);
  too_many_replicas.nodes = {host_port{"127.0.0.1", 9}};
  expect_bad_config(too_many_replicas, "--replicas=4 does not fit --nodes");
}

TEST_CASE("a run of 0 replicas has one per core, and nodes x replicas-per-node with nodes",
          "[fit][config]") {
  auto here = check_run_config(small_options("sync", 0, 32), &test_slice());
  REQUIRE(here);
  CHECK(here->replicas == usable_cores());
  auto on_nodes = small_options("sync", 0, 32);
  on_nodes.nodes = {host_port{"127.0.0.1", 9}, host_port{"127.0.0.1", 10}};
  on_nodes.replicas_per_node = 3;
  auto placed = check_run_config(on_nodes, &test_slice());
  REQUIRE(placed);
  CHECK(placed->replicas == 6);
}

TEST_CASE("ssp with a slowed replica trains, holds the fast ones within K and reports "
          "staleness",
          "[fit][ssp]") {
  auto options = small_options("ssp", 3, 48);
  options.policy.settings.staleness = 2;
  options.slow = slow_replica{2, 3.0f};
  record_log log;
  auto summary = run_fit(options, log.observer());
  REQUIRE(summary);
  CHECK(summary->test_accuracy > 0.5);
  REQUIRE(log.records.size() == 1);
  const auto& epoch = log.records[0];
  CHECK(epoch.staleness_reported);
  CHECK(epoch.staleness_max >= 1);
  // No replica is answered more than K = 2 pushes ahead of the slowest. While
  // one computes, another that was up to K behind it can push until it is
  // K + 1 ahead: at most 2K + 1 pushes from each of the two others.
  CHECK(epoch.staleness_max <= 2 * (2 * 2 + 1));
}

TEST_CASE("async with a staleness-aware learning rate trains with 2 store shards",
          "[fit][async][staleness-lr]") {
  auto options = small_options("async", 3, 48);
  options.policy.settings.staleness_lr = staleness_lr_rule::inverse;
  options.store_shards = 2;
  auto summary = run_fit(options);
  REQUIRE(summary);
  CHECK(summary->test_accuracy > 0.5);
}

TEST_CASE("sync with a backup replica drops the straggler's late gradients and finishes",
          "[fit][sync][backup]") {
  auto options = small_options("sync", 3, 48);
  options.policy.settings.backup_replicas = 1;
  options.slow = slow_replica{1, 4.0f};
  record_log log;
  auto summary = run_fit(options, log.observer());
  REQUIRE(summary);
  CHECK(summary->test_accuracy > 0.5);
  REQUIRE(log.records.size() == 1);
  CHECK(log.records[0].dropped > 0);
  CHECK(summary->version == 42); // one step per round: 2000 samples / 48
}

TEST_CASE("delayed fits are bitwise identical run after run and for any number of store "
          "shards",
          "[fit][delayed]") {
  for (uint32_t lag : {1u, 2u}) {
    INFO("K = " << lag);
    std::vector<fit_summary> runs;
    for (uint32_t shards : {1u, 1u, 1u, 3u}) {
      auto options = small_options("delayed", 3, 48);
      options.policy.settings.staleness = lag;
      options.store_shards = shards;
      options.epochs = 2;
      auto summary = run_fit(options);
      REQUIRE(summary);
      runs.push_back(*summary);
    }
    CHECK(runs[0].version == 2 * 42);
    CHECK(runs[0].test_accuracy > 0.5);
    for (size_t k = 1; k < runs.size(); ++k)
      CHECK(runs[k].params_fnv1a64 == runs[0].params_fnv1a64);
  }
  // And the delay changes the result: K = 1 is not sync.
  auto sync = small_options("sync", 3, 48);
  sync.epochs = 2;
  auto delayed = small_options("delayed", 3, 48);
  delayed.policy.settings.staleness = 1;
  delayed.epochs = 2;
  auto a = run_fit(sync);
  auto b = run_fit(delayed);
  REQUIRE(a);
  REQUIRE(b);
  CHECK(a->params_fnv1a64 != b->params_fnv1a64);
}

TEST_CASE("every point of the dial survives a lost replica with on_replica_loss continue",
          "[fit][ssp][delayed][backup][failure]") {
  for (const std::string mode : {"ssp", "delayed", "backup"}) {
    INFO(mode);
    auto options = losing_replica_options(3, 1, replica_loss_action::continue_run);
    if (mode == "backup") {
      options.policy.settings.backup_replicas = 1;
    } else {
      options.policy.name = mode;
      options.policy.settings.staleness = 2;
    }
    record_log log;
    auto summary = run_fit(options, log.observer());
    REQUIRE(summary);
    CHECK(summary->live_replicas == 2);
    CHECK(summary->test_accuracy > 0.3);
    CHECK(log.warnings.size() == 1);
  }
}

TEST_CASE("a delayed run saved mid-epoch resumes and finishes its epochs",
          "[fit][delayed][checkpoint]") {
  const auto path = (std::filesystem::temp_directory_path()
                     / ("troupe_delayed_" + std::to_string(::getpid()) + ".ckpt"))
                      .string();
  auto options = small_options("delayed", 2, 32);
  options.policy.settings.staleness = 1;
  options.epochs = 2;
  options.checkpoint_path = path;
  options.checkpoint_every = 20;
  testing::fail_replica_at_push(options, 0, 80); // in epoch 2 (63 rounds each)
  REQUIRE_FALSE(run_fit(options));
  auto resumed = small_options("delayed", 2, 32);
  resumed.policy.settings.staleness = 1;
  resumed.epochs = 2;
  resumed.resume_path = path;
  auto summary = run_fit(resumed);
  REQUIRE(summary);
  CHECK(summary->version == 2 * 63);
  CHECK(summary->test_accuracy > 0.5);
  std::filesystem::remove(path);
}
