// Respawns (--on-replica-loss=respawn) in whole fits on real threads: a
// replica that dies mid-round is replaced by a new actor that recomputes
// its share, so the run ends with the bits of the run where nothing died.
#include <catch2/catch.hpp>

#include <algorithm>
#include <mutex>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "actors/config/run_config.hpp"
#include "actors/run/coordinator.hpp"
#include "messages/errors.hpp"
#include "messages/register.hpp"
#include "tests/actors/failing_backend.hpp"
#include "tests/test_slice.hpp"

using namespace troupe;

namespace {

struct respawn_config : caf::actor_system_config {
  respawn_config() { register_messages(*this); }
};

// Two sync epochs of 3 replicas at batch 32 over the slice: 63 rounds each.
run_config sync_run(uint32_t shards) {
  run_config options;
  options.policy.name = "sync";
  options.replicas = 3;
  options.store_shards = shards;
  options.epochs = 2;
  options.batch_size = 32;
  options.model = "784-32relu-10";
  options.seed = 7;
  options.step_timeout_ms = 10000;
  return options;
}

struct warnings {
  std::mutex mutex;
  std::vector<std::string> lines;

  fit_observer observer() {
    fit_observer heard;
    heard.on_warning = [this](const std::string& text) {
      std::lock_guard<std::mutex> guard(mutex);
      lines.push_back(text);
    };
    return heard;
  }

  size_t count(const std::string& words) {
    std::lock_guard<std::mutex> guard(mutex);
    return static_cast<size_t>(std::count_if(lines.begin(), lines.end(), [&](const auto& line) {
      return line.find(words) != std::string::npos;
    }));
  }
};

} // namespace

TEST_CASE("a replica that dies mid-round is respawned and the run keeps the bits of the "
          "run where nothing died",
          "[fit][failure][respawn]") {
  respawn_config cfg;
  caf::actor_system sys{cfg};
  for (uint32_t shards : {1u, 3u}) {
    INFO("store shards: " << shards);
    auto uninterrupted = run_training(sys, sync_run(shards), shared_test_slice());
    REQUIRE(uninterrupted);
    // Replica 1 throws while computing its 40th gradient, and so does each
    // actor respawned in its place 40 gradients later: rounds 39, 78, 117.
    auto options = sync_run(shards);
    options.on_replica_loss = replica_loss_action::respawn;
    testing::fail_replica_at_push(options, 1, 40);
    warnings heard;
    std::vector<recovery_record> recoveries;
    auto observer = heard.observer();
    observer.on_recovery = [&recoveries](const recovery_record& r) { recoveries.push_back(r); };
    auto respawned = run_training(sys, options, shared_test_slice(), observer);
    INFO((respawned ? std::string("ok") : describe(respawned.error())));
    REQUIRE(respawned);
    CHECK(heard.count("replica 1 on cpu died in epoch") == 3);
    CHECK(heard.count("; respawned on cpu at round") == 3);
    CHECK(heard.count("at round 39 in") == 1);
    // Each recovery ends as the round its new actor recomputed closes.
    REQUIRE(recoveries.size() == 3);
    for (size_t n = 0; n < recoveries.size(); ++n) {
      CHECK(recoveries[n].after == "respawn");
      CHECK(recoveries[n].round == 39 * (n + 1));
      CHECK(recoveries[n].membership == n + 2);
      CHECK(recoveries[n].closed_ms > 0);
    }
    CHECK(respawned->params_fnv1a64 == uninterrupted->params_fnv1a64);
    CHECK(respawned->version == uninterrupted->version);
    CHECK(respawned->live_replicas == 3);
    CHECK(respawned->test_accuracy == uninterrupted->test_accuracy);
  }
}

TEST_CASE("a replica lost three times in one round ends the run",
          "[fit][failure][respawn]") {
  respawn_config cfg;
  caf::actor_system sys{cfg};
  auto options = sync_run(1);
  options.on_replica_loss = replica_loss_action::respawn;
  testing::fail_replica_at_push(options, 2, 1); // every actor of replica 2 dies at once
  auto failed = run_training(sys, options, shared_test_slice());
  REQUIRE_FALSE(failed);
  const auto text = describe(failed.error());
  INFO(text);
  CHECK(failed.error().code() == static_cast<uint8_t>(troupe_errc::replica_lost));
  CHECK(text.find("replica 2") != std::string::npos);
  CHECK(text.find("it was lost 3 times in round 0, so its share is not respawned again")
        != std::string::npos);
}

TEST_CASE("respawn is refused for sync with backup replicas, whose rounds close without "
          "the late shares",
          "[fit][respawn][options]") {
  auto options = sync_run(1);
  options.policy.settings.backup_replicas = 1;
  options.on_replica_loss = replica_loss_action::respawn;
  auto checked = check_run_config(options, &test_slice());
  REQUIRE_FALSE(checked);
  CHECK(describe(checked.error()).find("cannot be respawned") != std::string::npos);
}

TEST_CASE("under async, ssp and delayed a replica that dies mid-epoch is respawned and "
          "every sample of each epoch is trained exactly once",
          "[fit][failure][respawn][async]") {
  respawn_config cfg;
  caf::actor_system sys{cfg};
  for (const std::string mode : {"async", "ssp", "delayed"}) {
    INFO(mode);
    auto options = sync_run(3);
    options.policy.name = mode;
    if (mode != "async")
      options.policy.settings.staleness = 2; // at 0, ssp is sync
    auto uninterrupted = run_training(sys, options, shared_test_slice());
    REQUIRE(uninterrupted);
    // Replica 1 dies at its 30th gradient, and each new actor 30 later.
    options.on_replica_loss = replica_loss_action::respawn;
    testing::fail_replica_at_push(options, 1, 30);
    warnings heard;
    std::vector<epoch_record> epochs;
    auto observer = heard.observer();
    observer.on_epoch = [&epochs](const epoch_record& r) { epochs.push_back(r); };
    auto respawned = run_training(sys, options, shared_test_slice(), observer);
    INFO((respawned ? std::string("ok") : describe(respawned.error())));
    REQUIRE(respawned);
    CHECK(heard.count("; respawned on cpu at round") >= 3);
    // As many steps as the uninterrupted run, on each of the 3 shards (the
    // run checks that they agree), and every sample once per epoch.
    CHECK(respawned->version == uninterrupted->version);
    CHECK(respawned->respawns >= 3);
    REQUIRE(epochs.size() == 2);
    for (const auto& epoch : epochs)
      CHECK(epoch.samples == static_cast<uint64_t>(test_slice().train.count));
  }
}

TEST_CASE("a wait for a join needs joins, and must end before the other replicas give up",
          "[fit][respawn][options]") {
  auto options = sync_run(1);
  options.on_replica_loss = replica_loss_action::respawn;
  options.respawn_timeout_ms = 5000;
  auto without_joins = check_run_config(options, &test_slice());
  REQUIRE_FALSE(without_joins);
  CHECK(describe(without_joins.error()).find("it needs --accept-joins") != std::string::npos);
  options.accept_joins = host_port{"127.0.0.1", 4100};
  CHECK(check_run_config(options, &test_slice()));
  options.respawn_timeout_ms = options.step_timeout_ms;
  auto too_long = check_run_config(options, &test_slice());
  REQUIRE_FALSE(too_long);
  CHECK(describe(too_long.error()).find("must be shorter than --step-timeout=10000")
        != std::string::npos);
  options.respawn_timeout_ms = 0;
  options.on_replica_loss = replica_loss_action::abort;
  auto joins_without_respawn = check_run_config(options, &test_slice());
  REQUIRE_FALSE(joins_without_respawn);
  CHECK(describe(joins_without_respawn.error()).find("needs --on-replica-loss=respawn")
        != std::string::npos);
}
