// The sharded store end to end on real threads over the Fashion-MNIST slice:
// sync parameters do not depend on the number of shards, a checkpoint of S
// shards resumes with any other number, and the writer assembles parts.
#include <catch2/catch.hpp>

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "actors/store/checkpoint_writer.hpp"
#include "actors/run/coordinator.hpp"
#include "messages/errors.hpp"
#include "messages/register.hpp"
#include "model/checkpoint.hpp"
#include "tests/actors/checkpoint_checks.hpp"
#include "tests/actors/failing_backend.hpp"
#include "tests/test_slice.hpp"

using namespace troupe;

namespace {

struct shard_config : caf::actor_system_config {
  shard_config() { register_messages(*this); }
};

// 3 replicas, global batch 24 over 2000 samples: 84 rounds an epoch, the last
// one short; Adam, whose state must follow each shard's range.
run_config sharded_run(const std::string& mode, uint32_t shards, uint32_t epochs) {
  run_config o;
  o.policy.name = mode;
  o.replicas = 3;
  o.epochs = epochs;
  o.batch_size = 24;
  o.seed = 5;
  o.store_shards = shards;
  o.step_timeout_ms = 20000;
  return o;
}

// One shard's part of round `round`: shard 0 owns [0, 16), shard 1 [16, 40)
// of 40 parameters; Adam's state is m then v.
checkpoint_part part(uint32_t shard, size_t count, float base, uint64_t round) {
  checkpoint_part p;
  p.shard = shard;
  p.shards = 2;
  p.round = round;
  p.version = round;
  p.optimizer_steps = round;
  std::vector<float> params(count), state(2 * count);
  for (size_t i = 0; i < count; ++i) {
    params[i] = base + static_cast<float>(i);
    state[i] = 1000 + base + static_cast<float>(i);         // m
    state[count + i] = 2000 + base + static_cast<float>(i); // v
  }
  p.params = shared_floats{std::move(params)};
  p.optimizer_state = shared_floats{std::move(state)};
  return p;
}

} // namespace

TEST_CASE("sync parameters are bitwise identical for 1, 2, 3 and 4 store shards over "
          "several hundred steps",
          "[shards][sync][fit]") {
  shard_config cfg;
  caf::actor_system sys{cfg};
  std::vector<fit_summary> runs;
  for (uint32_t shards = 1; shards <= 4; ++shards) {
    auto run = run_training(sys, sharded_run("sync", shards, 4), shared_test_slice());
    REQUIRE(run);
    runs.push_back(*run);
  }
  CHECK(runs[0].version == 4 * 84);
  for (uint32_t k = 1; k < runs.size(); ++k) {
    INFO("store shards: " << k + 1);
    CHECK(runs[k].version == runs[0].version);
    CHECK(runs[k].params_fnv1a64 == runs[0].params_fnv1a64);
    CHECK(runs[k].test_accuracy == runs[0].test_accuracy);
  }
  CHECK(runs[0].test_accuracy > 0.6);
}

TEST_CASE("async training with 3 store shards steps every shard once per push and learns",
          "[shards][async][fit]") {
  shard_config cfg;
  caf::actor_system sys{cfg};
  auto run = run_training(sys, sharded_run("async", 3, 2), shared_test_slice());
  REQUIRE(run);
  // Every push is one step of each shard: 2 epochs of 2000 samples in 8s.
  CHECK(run->version == 2 * 3 * 84);
  CHECK(run->test_accuracy > 0.6);
}

TEST_CASE("a sync run saved with 3 store shards resumes with 1 or 2 and equals the "
          "uninterrupted run",
          "[shards][checkpoint][fit]") {
  shard_config cfg;
  caf::actor_system sys{cfg};
  const auto path = testing::temp_checkpoint_path("shards", "any-s.ckpt");
  auto uninterrupted = run_training(sys, sharded_run("sync", 2, 2), shared_test_slice());
  REQUIRE(uninterrupted);

  // Checkpoints every 30 rounds with 3 shards: at 30, 60, at the end of epoch
  // 1 (84, which restarts the count) and at 114; replica 2 dies at its 120th
  // push (round 119): the last file is of round 114, 30 into epoch 2.
  auto interrupted_options = sharded_run("sync", 3, 2);
  interrupted_options.checkpoint_path = path;
  interrupted_options.checkpoint_every = 30;
  testing::fail_replica_at_push(interrupted_options, 2, 120);
  REQUIRE_FALSE(run_training(sys, interrupted_options, shared_test_slice()));
  auto saved = read_checkpoint(path);
  REQUIRE(saved);
  CHECK(saved->round == 114);
  CHECK(saved->epoch == 1);
  CHECK(saved->epoch_round == 30);
  CHECK_FALSE(saved->epoch_complete);

  for (uint32_t shards : {1u, 2u}) {
    INFO("resumed with store shards: " << shards);
    testing::check_resumes_to(sys, sharded_run("sync", shards, 2), path, *uninterrupted);
  }
  std::filesystem::remove(path);
}

TEST_CASE("the checkpoint writer assembles parts in any order and refuses a set that does "
          "not make one round",
          "[shards][checkpoint]") {
  const checkpoint_target target{"/unused", "784-10", {{"seed", "9"}}, "adam", 40, 2};
  auto whole = assemble_checkpoint(target, {part(1, 24, 16, 7), part(0, 16, 0, 7)});
  REQUIRE(whole);
  CHECK(whole->round == 7);
  CHECK(whole->settings == target.settings);
  CHECK(whole->config_fingerprint == settings_fingerprint(target.settings));
  REQUIRE(whole->params.size() == 40);
  REQUIRE(whole->optimizer_state.size() == 80);
  for (size_t i = 0; i < 40; ++i) {
    CHECK(whole->params[i] == static_cast<float>(i));
    CHECK(whole->optimizer_state[i] == 1000 + static_cast<float>(i));
    CHECK(whole->optimizer_state[40 + i] == 2000 + static_cast<float>(i));
  }
  auto missing = assemble_checkpoint(target, {part(0, 16, 0, 7)});
  REQUIRE_FALSE(missing);
  CHECK(describe(missing.error()).find("one part from each of 2 store shards")
        != std::string::npos);
  auto rounds = assemble_checkpoint(target, {part(0, 16, 0, 7), part(1, 24, 16, 8)});
  REQUIRE_FALSE(rounds);
  CHECK(describe(rounds.error()).find("is of round 8") != std::string::npos);
  auto twice = assemble_checkpoint(target, {part(0, 16, 0, 7), part(0, 16, 0, 7)});
  REQUIRE_FALSE(twice);
  auto wrong_size = assemble_checkpoint(target, {part(0, 16, 0, 7), part(1, 20, 16, 7)});
  REQUIRE_FALSE(wrong_size);
  CHECK(describe(wrong_size.error()).find("expected 24") != std::string::npos);
}

TEST_CASE("the checkpoint writer keeps the newest complete snapshot in memory, whatever "
          "part arrives late or twice, and answers it for a heal",
          "[shards][checkpoint][heal]") {
  shard_config cfg;
  caf::actor_system system{cfg};
  // No path: a healing store's writer only keeps snapshots.
  auto writer = spawn_checkpoint_writer(system, {"", "784-10", {{"seed", "9"}}, "adam", 40, 2});
  caf::scoped_actor self{system};
  auto restored_round = [&]() -> std::optional<uint64_t> {
    std::optional<uint64_t> round;
    self->request(writer, std::chrono::seconds(5), restore_atom::value)
      .receive(
        [&](std::vector<checkpoint_part>& parts) {
          REQUIRE(parts.size() == 2);
          CHECK(parts[0].round == parts[1].round);
          CHECK(assemble_checkpoint({"", "784-10", {{"seed", "9"}}, "adam", 40, 2}, parts));
          round = parts[0].round;
        },
        [&](caf::error& err) {
          CHECK(describe(err).find("no snapshot of the store is kept") != std::string::npos);
        });
    return round;
  };
  CHECK_FALSE(restored_round());
  self->send(writer, snapshot_atom::value, std::vector<checkpoint_part>{part(0, 16, 0, 4),
                                                                       part(1, 24, 16, 4)});
  CHECK(restored_round() == 4u);
  self->send(writer, snapshot_atom::value, part(1, 24, 16, 7));
  self->send(writer, snapshot_atom::value, part(1, 24, 16, 7)); // resent: replaces, not doubles
  CHECK(restored_round() == 4u); // round 7 lacks shard 0's part
  self->send(writer, snapshot_atom::value, part(1, 24, 16, 9));
  self->send(writer, snapshot_atom::value, part(0, 16, 0, 9));
  CHECK(restored_round() == 9u);
  self->send(writer, snapshot_atom::value, part(0, 16, 0, 7)); // a late part of an older round
  self->send(writer, snapshot_atom::value, std::vector<checkpoint_part>{part(0, 16, 0, 6),
                                                                       part(1, 24, 16, 6)});
  CHECK(restored_round() == 9u);
  self->send_exit(writer, caf::exit_reason::user_shutdown);
}
