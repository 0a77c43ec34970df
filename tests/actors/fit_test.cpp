// Whole fits on real threads over the Fashion-MNIST slice in tests/data:
// determinism, sync equivalence with one replica, async training, uneven
// batches, replica loss and bad options. Every fit is bounded by its own step
// timeouts; the failure tests also bound their wall time.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include <unistd.h>

#include "actors/run/coordinator.hpp"
#include "actors/runtime/core_pinning.hpp"
#include "tests/actors/failing_backend.hpp"
#include "messages/errors.hpp"
#include "messages/register.hpp"
#include "model/model_spec.hpp"
#include "tests/test_slice.hpp"

using namespace troupe;

namespace {

struct fit_config : caf::actor_system_config {
  fit_config() { register_messages(*this); }
};

// A small, quick run: a narrow model and SGD, whose update is linear in the
// gradient. Adam's normalisation amplifies reduction round-off on small
// gradients past the equivalence test's tolerance; SGD's stays within it.
run_config small_options(const std::string& mode, uint32_t replicas, uint32_t batch) {
  run_config options;
  options.policy.name = mode;
  options.replicas = replicas;
  options.epochs = 1;
  options.batch_size = batch;
  options.model = "784-32relu-10";
  options.optimizer.name = "sgd";
  options.optimizer.learning_rate = 0.05f;
  options.seed = 7;
  options.step_timeout_ms = 10000;
  return options;
}

// Collects the epoch records and warnings the observer sees (it runs on the
// coordinator's thread, so the test reads them only after fit returns).
struct record_log {
  std::mutex mutex;
  std::vector<epoch_record> records;
  std::vector<std::string> warnings;
  fit_observer observer() {
    fit_observer heard;
    heard.on_epoch = [this](const epoch_record& record) {
      std::lock_guard<std::mutex> guard(mutex);
      records.push_back(record);
    };
    heard.on_warning = [this](const std::string& text) {
      std::lock_guard<std::mutex> guard(mutex);
      warnings.push_back(text);
    };
    return heard;
  }
};

caf::expected<fit_summary> run_fit(const run_config& options,
                                   fit_observer observer = {}) {
  fit_config cfg;
  caf::actor_system sys{cfg};
  return run_training(sys, options, shared_test_slice(), std::move(observer));
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// A sync fit of `replicas` replicas at batch 32 in which replica
// `fail_replica` throws at push 5, bounded by 3 s per push.
run_config losing_replica_options(uint32_t replicas, uint32_t fail_replica,
                                  replica_loss_action on_replica_loss) {
  auto options = small_options("sync", replicas, 32);
  options.on_replica_loss = on_replica_loss;
  testing::fail_replica_at_push(options, fail_replica, 5);
  options.step_timeout_ms = 3000;
  return options;
}

// Runs a fit that must fail because a replica was lost; checks the error's
// code, that it names the replica and that it came within 30 s, and returns
// the error for the caller's own checks.
caf::error fit_fails_losing_replica(const run_config& options, uint32_t lost_replica) {
  const auto start = std::chrono::steady_clock::now();
  auto summary = run_fit(options);
  const double elapsed = seconds_since(start);
  REQUIRE_FALSE(summary);
  const auto text = describe(summary.error());
  INFO(text);
  CHECK(summary.error().code() == static_cast<uint8_t>(troupe_errc::replica_lost));
  CHECK(text.find("replica " + std::to_string(lost_replica)) != std::string::npos);
  CHECK(elapsed < 30.0);
  return summary.error();
}

// Compares two parameter vectors element-wise: |a - b| <= rtol * max(|a|,|b|) + atol.
// Returns the index of the worst violation ratio, for a message.
struct comparison {
  bool ok = true;
  size_t worst = 0;
  double worst_ratio = 0; // |a - b| / (rtol * max + atol); > 1 fails
};

comparison compare_params(const shared_floats& a, const shared_floats& b, double rtol,
                          double atol) {
  comparison result;
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    const double x = a.data()[i];
    const double y = b.data()[i];
    const double bound = rtol * std::max(std::abs(x), std::abs(y)) + atol;
    double ratio = std::abs(x - y) / bound;
    if (std::isnan(ratio))
      ratio = INFINITY;
    if (i == 0 || ratio > result.worst_ratio) {
      result.worst = i;
      result.worst_ratio = ratio;
    }
  }
  result.ok = result.worst_ratio <= 1.0;
  return result;
}

} // namespace

TEST_CASE("sync fits with one seed are bitwise identical run after run",
          "[fit][sync][determinism]") {
  // The full default model and Adam, as a user runs it.
  auto options = small_options("sync", 2, 32);
  options.model = "784-128relu-10";
  options.optimizer = optimizer_config{};
  std::vector<uint64_t> hashes;
  for (int run = 0; run < 3; ++run) {
    auto summary = run_fit(options);
    REQUIRE(summary);
    CHECK(summary->version == 63); // ceil(2000 / 32) rounds, one step each
    CHECK(summary->params.size() == 101770);
    CHECK(summary->params_fnv1a64
          == fnv1a64(summary->params.data(), summary->params.size() * sizeof(float)));
    hashes.push_back(summary->params_fnv1a64);
  }
  CHECK(hashes[0] == hashes[1]);
  CHECK(hashes[0] == hashes[2]);

  // A different seed really changes the result: the hash is not a constant.
  options.seed = 8;
  auto other = run_fit(options);
  REQUIRE(other);
  CHECK(other->params_fnv1a64 != hashes[0]);
}

TEST_CASE("sync with 2 and 4 replicas equals 1 replica at the same global batch",
          "[fit][sync][equivalence]") {
  // Batch 8 on 2000 samples: 250 steps.
  auto single = run_fit(small_options("sync", 1, 8));
  REQUIRE(single);
  REQUIRE(single->version == 250);
  for (uint32_t replicas : {2u, 4u}) {
    auto many = run_fit(small_options("sync", replicas, 8));
    REQUIRE(many);
    CHECK(many->version == 250);
    auto cmp = compare_params(many->params, single->params, 1e-5, 1e-7);
    INFO(replicas << " replicas: worst index " << cmp.worst << ": "
                  << many->params.data()[cmp.worst] << " vs "
                  << single->params.data()[cmp.worst] << " (" << cmp.worst_ratio
                  << " of the tolerance)");
    CHECK(cmp.ok);
    CHECK(many->test_accuracy == Approx(single->test_accuracy).margin(0.01));
  }
}

TEST_CASE("async with 2 replicas trains well above chance and records staleness",
          "[fit][async]") {
  auto options = small_options("async", 2, 32);
  options.epochs = 2;
  options.optimizer = optimizer_config{}; // adam, as Keras would
  record_log log;
  auto summary = run_fit(options, log.observer());
  REQUIRE(summary);
  CHECK(summary->mode == "async");
  CHECK(summary->live_replicas == 2);
  // Each replica pushes every round: 2 epochs * 63 rounds * 2 replicas steps.
  CHECK(summary->version == 2 * 63 * 2);
  CHECK(summary->test_accuracy > 0.6); // chance is 0.10
  REQUIRE(log.records.size() == 2);
  double staleness = 0;
  for (const auto& record : log.records) {
    CHECK(record.samples == 2000);
    CHECK(record.pushes == 126);
    staleness += record.staleness_mean;
  }
  CHECK(staleness > 0);
  CHECK(log.records[1].staleness_max >= 1);
}

TEST_CASE("an uneven last round (batch 3 over 3 replicas) counts every sample once",
          "[fit][sync][uneven]") {
  // 2000 = 666 * 3 + 2: the last round gives replicas 0 and 1 one sample each
  // and replica 2 none; it must still take part or the round never closes.
  auto options = small_options("sync", 3, 3);
  options.epochs = 2;
  options.step_timeout_ms = 5000;
  record_log log;
  const auto start = std::chrono::steady_clock::now();
  auto summary = run_fit(options, log.observer());
  INFO("elapsed " << seconds_since(start) << " s");
  REQUIRE(summary);
  CHECK(summary->version == 2 * 667);
  CHECK(summary->live_replicas == 3);
  REQUIRE(log.records.size() == 2);
  for (const auto& record : log.records) {
    CHECK(record.samples == 2000);
    CHECK(record.pushes == 667 * 3);
    CHECK(record.live_replicas == 3);
  }
  CHECK(log.records[0].version == 667);
  CHECK(log.records[1].version == 2 * 667);
}

TEST_CASE("a replica lost mid-epoch aborts the fit with an error naming it",
          "[fit][failure]") {
  const auto error = fit_fails_losing_replica(losing_replica_options(2, 1, replica_loss_action::abort), 1);
  CHECK(error.category() == caf::atom("troupe"));
}

TEST_CASE("a replica lost mid-epoch with on_replica_loss continue finishes with the "
          "others",
          "[fit][failure]") {
  auto options = losing_replica_options(2, 1, replica_loss_action::continue_run);
  options.epochs = 2;
  record_log log;
  const auto start = std::chrono::steady_clock::now();
  auto summary = run_fit(options, log.observer());
  const double elapsed = seconds_since(start);
  INFO((summary ? std::string("ok") : describe(summary.error())));
  REQUIRE(summary);
  CHECK(summary->replicas == 2);
  CHECK(summary->live_replicas == 1);
  REQUIRE(log.records.size() == 2);
  CHECK(log.records[0].live_replicas == 1);
  // The loss reached the caller as one warning, through the observer.
  REQUIRE(log.warnings.size() == 1);
  CHECK(log.warnings[0].find("replica 1 on cpu died in epoch 1") != std::string::npos);
  CHECK(log.warnings[0].find("; continuing with 1 replica") != std::string::npos);
  // Every round still made one step: the store closed the round it was lost
  // in over replica 0 alone, and then rounds of one.
  CHECK(summary->version == 2 * 63);
  CHECK(summary->test_accuracy > 0.3);
  CHECK(elapsed < 30.0);
}

TEST_CASE("losing the only replica ends the fit even with on_replica_loss continue",
          "[fit][failure]") {
  auto options = losing_replica_options(1, 0, replica_loss_action::continue_run);
  testing::fail_replica_at_push(options, 0, 3);
  const auto text = describe(fit_fails_losing_replica(options, 0));
  INFO(text);
  CHECK(text.find("no replica is left") != std::string::npos);
}

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
