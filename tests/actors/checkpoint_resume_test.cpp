// Checkpoints through the real fit(): a run interrupted mid-epoch and resumed
// ends bitwise identical to the uninterrupted run; bad checkpoints are refused.
#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include <caf/all.hpp>

#include "actors/run/coordinator.hpp"
#include "messages/errors.hpp"
#include "messages/register.hpp"
#include "model/checkpoint.hpp"
#include "tests/actors/checkpoint_checks.hpp"
#include "tests/actors/failing_backend.hpp"
#include "tests/test_slice.hpp"

using namespace troupe;

namespace {

struct resume_config : caf::actor_system_config {
  resume_config() { register_messages(*this); }
};

run_config small_run(const std::string& checkpoint) {
  return testing::small_checkpointed_run(checkpoint);
}

std::string temp_path(const std::string& name) {
  return testing::temp_checkpoint_path("resume", name);
}

// A run that checkpoints every 40 rounds and dies in its second epoch. With
// 125 rounds per epoch it writes at rounds 40, 80, 120, at the end of epoch 1
// (125; that restarts the count) and at 165; replica 1 dies at its 170th push
// (round 169), so the last checkpoint is round 165, 40 rounds into epoch 2.
run_config interrupted_run(const std::string& checkpoint) {
  auto o = small_run(checkpoint);
  o.checkpoint_every = 40;
  testing::fail_replica_at_push(o, 1, 170);
  return o;
}

} // namespace

TEST_CASE("a sync run interrupted mid-epoch and resumed equals the uninterrupted run",
          "[checkpoint][fit]") {
  resume_config cfg;
  caf::actor_system sys{cfg};
  const auto path = temp_path("mid.ckpt");
  auto uninterrupted = run_training(sys, small_run(""), shared_test_slice());
  REQUIRE(uninterrupted);

  auto interrupted = run_training(sys, interrupted_run(path), shared_test_slice());
  REQUIRE_FALSE(interrupted);
  REQUIRE(std::filesystem::exists(path));
  // A periodic checkpoint: mid-epoch, so the flag is unset and the resume
  // starts at round 40 of epoch 2.
  auto saved = read_checkpoint(path);
  REQUIRE(saved);
  CHECK_FALSE(saved->epoch_complete);
  CHECK(saved->epoch == 1);
  CHECK(saved->epoch_round == 40);
  CHECK(saved->round == 165);

  auto resumed_options = small_run(path);
  resumed_options.checkpoint_every = 40;
  testing::check_resumes_to(sys, resumed_options, path, *uninterrupted);
  std::filesystem::remove(path);
}

TEST_CASE("a truncated checkpoint is refused with an error naming the file",
          "[checkpoint][fit]") {
  resume_config cfg;
  caf::actor_system sys{cfg};
  const auto path = temp_path("cut.ckpt");
  auto options = small_run(path);
  options.epochs = 1;
  REQUIRE(run_training(sys, options, shared_test_slice()));
  std::filesystem::resize_file(path, std::filesystem::file_size(path) / 2);
  options.resume_path = path;
  auto resumed = run_training(sys, options, shared_test_slice());
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
  REQUIRE(run_training(sys, options, shared_test_slice()));

  auto other_model = options;
  other_model.model = "784-64relu-10";
  other_model.resume_path = path;
  auto refused_model = run_training(sys, other_model, shared_test_slice());
  REQUIRE_FALSE(refused_model);
  CHECK(describe(refused_model.error()).find("784-128relu-10") != std::string::npos);

  auto other_seed = options;
  other_seed.seed = 12;
  other_seed.resume_path = path;
  auto refused_seed = run_training(sys, other_seed, shared_test_slice());
  REQUIRE_FALSE(refused_seed);
  CHECK(describe(refused_seed.error()).find(path) != std::string::npos);
  CHECK(describe(refused_seed.error()).find("(--seed=11 there, 12 here)") != std::string::npos);
  std::filesystem::remove(path);
}

TEST_CASE("a checkpoint with the epoch-complete flag set resumes at the next epoch",
          "[checkpoint][fit]") {
  resume_config cfg;
  caf::actor_system sys{cfg};
  for (const std::string mode : {"sync", "async"}) {
    INFO(mode);
    const auto path = temp_path(mode + "_end.ckpt");
    auto two_epochs = small_run("");
    two_epochs.policy.name = mode;
    auto uninterrupted = run_training(sys, two_epochs, shared_test_slice());
    REQUIRE(uninterrupted);

    // One epoch: its end-of-epoch checkpoint carries the flag.
    auto first = small_run(path);
    first.policy.name = mode;
    first.epochs = 1;
    REQUIRE(run_training(sys, first, shared_test_slice()));
    auto saved = read_checkpoint(path);
    REQUIRE(saved);
    CHECK(saved->epoch_complete);
    CHECK(saved->epoch == 0);

    auto rest = small_run(path);
    rest.policy.name = mode;
    rest.resume_path = path;
    std::vector<epoch_record> records;
    fit_observer observer;
    observer.on_epoch = [&](const epoch_record& r) { records.push_back(r); };
    auto resumed = run_training(sys, rest, shared_test_slice(), observer);
    REQUIRE(resumed);
    REQUIRE(records.size() == 1); // the second epoch only
    CHECK(records[0].epoch == 2);
    // The record says what the policy reports: staleness under async only.
    CHECK(records[0].staleness_reported == (mode == "async"));
    // Async is not reproducible bit for bit, but its step count is.
    CHECK(resumed->version == uninterrupted->version);
    if (mode == "sync")
      CHECK(resumed->params_fnv1a64 == uninterrupted->params_fnv1a64);
    std::filesystem::remove(path);
  }
}

TEST_CASE("the epoch-complete flag, not the data position, decides where a resume starts",
          "[checkpoint][fit]") {
  resume_config cfg;
  caf::actor_system sys{cfg};
  const auto path = temp_path("flag.ckpt");
  // A mid-epoch checkpoint: epoch 1 (0-based), 40 of its 125 rounds done.
  REQUIRE_FALSE(run_training(sys, interrupted_run(path), shared_test_slice()));
  auto saved = read_checkpoint(path);
  REQUIRE(saved);
  REQUIRE_FALSE(saved->epoch_complete);
  REQUIRE(saved->epoch_round == 40);

  // Unset: the resume trains the 85 rounds left of the last epoch.
  auto resume = small_run("");
  resume.resume_path = path;
  std::vector<epoch_record> records;
  fit_observer observer;
  observer.on_epoch = [&](const epoch_record& r) { records.push_back(r); };
  auto mid = run_training(sys, resume, shared_test_slice(), observer);
  REQUIRE(mid);
  REQUIRE(records.size() == 1);
  CHECK(records[0].epoch == 2);
  CHECK(mid->version == saved->version + 85);

  // Set on the same file: that epoch counts as done and nothing is left,
  // which the resume says instead of training nothing.
  saved->epoch_complete = true;
  REQUIRE(write_checkpoint(path, *saved));
  records.clear();
  auto done = run_training(sys, resume, shared_test_slice(), observer);
  REQUIRE_FALSE(done);
  CHECK(records.empty());
  CHECK(describe(done.error())
        == "checkpoint " + path + " is of a run that finished epoch 2, nothing is left of "
           "--epochs=2: pass --epochs=3 or more to train on");
  resume.epochs = 3;
  auto more = run_training(sys, resume, shared_test_slice(), observer);
  REQUIRE(more);
  REQUIRE(records.size() == 1);
  CHECK(records[0].epoch == 3);
  std::filesystem::remove(path);
}

TEST_CASE("a sync run with global_clipnorm on 2 shards, interrupted mid-epoch and resumed, "
          "equals the uninterrupted run; another clipnorm is refused",
          "[checkpoint][fit][clipnorm]") {
  resume_config cfg;
  caf::actor_system sys{cfg};
  const auto path = temp_path("clip.ckpt");
  auto clipped = [](run_config o) {
    o.store_shards = 2;
    o.optimizer.global_clipnorm = 0.5f;
    return o;
  };
  auto uninterrupted = run_training(sys, clipped(small_run("")), shared_test_slice());
  REQUIRE(uninterrupted);
  // The clip is active in this run.
  auto unclipped = small_run("");
  unclipped.store_shards = 2;
  auto plain = run_training(sys, unclipped, shared_test_slice());
  REQUIRE(plain);
  CHECK(plain->params_fnv1a64 != uninterrupted->params_fnv1a64);
  // Periodic checkpoints come after each round's clipped step.
  REQUIRE_FALSE(run_training(sys, clipped(interrupted_run(path)), shared_test_slice()));
  auto saved = read_checkpoint(path);
  REQUIRE(saved);
  CHECK(saved->round == 165);
  auto other_clip = clipped(small_run(path));
  other_clip.optimizer.global_clipnorm = 1.0f;
  other_clip.resume_path = path;
  auto refused = run_training(sys, other_clip, shared_test_slice());
  REQUIRE_FALSE(refused);
  CHECK(describe(refused.error()).find("(--global-clipnorm=0.5 there, 1 here)")
        != std::string::npos);
  auto resumed_options = clipped(small_run(path));
  resumed_options.checkpoint_every = 40;
  testing::check_resumes_to(sys, resumed_options, path, *uninterrupted);
  std::filesystem::remove(path);
}
