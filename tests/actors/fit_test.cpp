// Whole fits on real threads over the Fashion-MNIST slice in tests/data:
// determinism, sync equivalence with one replica, async training, uneven
// batches and replica loss. Every fit is bounded by its own step timeouts;
// the failure tests also bound their wall time.
#include <catch2/catch.hpp>

#include <chrono>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "actors/run/coordinator.hpp"
#include "messages/errors.hpp"
#include "messages/register.hpp"
#include "tests/actors/failing_backend.hpp"
#include "tests/actors/fit_fixture.hpp"
#include "tests/test_slice.hpp"

using namespace troupe;
using namespace troupe::testing;

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
  const auto error =
    fit_fails_losing_replica(losing_replica_options(2, 1, replica_loss_action::abort), 1);
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
