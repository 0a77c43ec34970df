// The variable store actor under CAF's deterministic scheduler: closed-form
// sync and async steps, who is answered when, refused pushes, staleness
// (a replica's loss: store_replica_loss_test.cpp; checkpoints:
// store_checkpoint_test.cpp).
#include <catch2/catch.hpp>

#include <limits>
#include <vector>

#include "tests/actors/store_fixture.hpp"

using namespace troupe;
using namespace troupe::testing;

TEST_CASE("a fresh store answers its initial parameters at version 0", "[store]") {
  store_fixture f("sync", 1);
  auto params = f.current_params();
  CHECK(params.version == 0);
  CHECK(params.round == 0);
  check_values(params, initial_parameters());
  auto stats = f.stats();
  CHECK(stats.version == 0);
  CHECK(stats.pushes == 0);
  CHECK(stats.live_replicas == 0);
  f.watch(0);
  CHECK(f.stats().live_replicas == 1);
}

TEST_CASE("a store is not spawned for an unknown mode, optimizer or no parameters",
          "[store]") {
  test_config cfg;
  caf::actor_system sys{cfg};
  store_config bad_mode;
  bad_mode.policy.name = "bogus";
  bad_mode.initial_parameters = shared_floats{initial_parameters()};
  auto a = spawn_variable_store(sys, bad_mode);
  REQUIRE_FALSE(a);
  CHECK(describe(a.error()).find("bogus") != std::string::npos);

  store_config bad_optimizer;
  bad_optimizer.optimizer.name = "adagrad";
  bad_optimizer.initial_parameters = shared_floats{initial_parameters()};
  auto b = spawn_variable_store(sys, bad_optimizer);
  REQUIRE_FALSE(b);
  CHECK(describe(b.error()).find("adagrad") != std::string::npos);

  store_config no_parameters;
  CHECK_FALSE(spawn_variable_store(sys, no_parameters));
}

TEST_CASE("sync store makes exactly one step with the mean of 3 replicas and "
          "answers nobody before the round is full",
          "[store][sync]") {
  store_fixture f("sync", 3);
  for (uint32_t i = 0; i < 3; ++i)
    f.watch(i);
  CHECK(f.stats().live_replicas == 3);

  // Arrival order 2, 0: no answer to anyone yet, and no step.
  f.push(2, f.make_push(2, 0, 0, filled(parameter_count, 3.0f)));
  f.push(0, f.make_push(0, 0, 0, filled(parameter_count, 1.0f)));
  for (uint32_t i = 0; i < 3; ++i)
    CHECK(f.take(i).empty());
  CHECK(f.current_params().version == 0);

  f.push(1, f.make_push(1, 0, 0, filled(parameter_count, 2.0f)));
  std::vector<params_msg> answers;
  for (uint32_t i = 0; i < 3; ++i) {
    auto r = f.take(i);
    REQUIRE(r.params);
    answers.push_back(*r.params);
  }
  // (N + 1) / 2 = 2 with sgd lr = 1: params -= 2, in one step.
  for (const auto& answer : answers) {
    CHECK(answer.version == 1);
    CHECK(answer.round == 1);
    CHECK(answer.staleness == 0);
    check_values(answer, shifted(2.0f));
  }
  // Every replica holds the very same buffer: one publish, shared in-process.
  CHECK(answers[0].values.data() == answers[1].values.data());
  CHECK(answers[1].values.data() == answers[2].values.data());
  // And nobody got a second answer.
  for (uint32_t i = 0; i < 3; ++i)
    CHECK(f.take(i).empty());

  auto stats = f.stats();
  CHECK(stats.version == 1);
  CHECK(stats.pushes == 3);
  CHECK(stats.rejected == 0);
  CHECK(stats.staleness_sum == 0);
  check_values(f.current_params(), shifted(2.0f));
}

TEST_CASE("a sync shard of shared buffers steps into the one its replicas did not read",
          "[store][sync]") {
  const auto shared = shared_parameter_buffers::holding(initial_parameters());
  store_fixture f("sync", 2, {}, {}, shared);
  f.watch(0);
  f.watch(1);
  // Round r's step leaves the buffer its replicas read in round r as it was.
  const std::vector<std::shared_ptr<std::vector<float>>> read_in_round = {
    shared.current, shared.other, shared.current, shared.other};
  float applied = 0;
  for (uint64_t round = 0; round < 3; ++round) {
    const auto before = *read_in_round[round];
    f.push(0, f.make_push(0, round, round, filled(parameter_count, 1.0f)));
    f.push(1, f.make_push(1, round, round, filled(parameter_count, 3.0f)));
    applied += 2.0f; // the mean, with sgd lr = 1
    auto r = f.take(0);
    REQUIRE(r.params);
    check_values(*r.params, shifted(applied));
    CHECK(r.params->values.data() == read_in_round[round + 1]->data());
    CHECK(*read_in_round[round] == before);
    REQUIRE(f.take(1).params);
  }
}

TEST_CASE("an async shard steps a copy while an answer holds its version and reuses "
          "the buffer of one no answer holds",
          "[store][async]") {
  store_fixture f("async", 1);
  f.watch(0);
  f.push(0, f.make_push(0, 0, 0, filled(parameter_count, 1.0f)));
  auto first = f.take(0);
  REQUIRE(first.params); // version 1, held here
  const float* first_buffer = first.params->values.data();

  f.push(0, f.make_push(0, 1, 1, filled(parameter_count, 1.0f)));
  auto second = f.take(0);
  REQUIRE(second.params);
  CHECK(second.params->values.data() != first_buffer); // version 1 is still read
  check_values(*first.params, shifted(1.0f));
  check_values(*second.params, shifted(2.0f));

  first = reply{}; // nobody holds version 1 any more
  f.push(0, f.make_push(0, 2, 2, filled(parameter_count, 1.0f)));
  auto third = f.take(0);
  REQUIRE(third.params);
  CHECK(third.params->values.data() == first_buffer); // its buffer, reused
  check_values(*second.params, shifted(2.0f));
  check_values(*third.params, shifted(3.0f));
}

TEST_CASE("a store is not spawned with shared buffers of the wrong size", "[store]") {
  test_config cfg;
  caf::actor_system sys{cfg};
  store_config options;
  options.policy.name = "sync";
  options.initial_parameters = shared_floats{initial_parameters()};
  auto shared = shared_parameter_buffers::holding(initial_parameters());
  shared.other->resize(parameter_count - 1);
  auto spawned = spawn_variable_store(sys, options, {}, shared);
  REQUIRE_FALSE(spawned);
  CHECK(describe(spawned.error()).find("shared parameter buffers hold 6 and 5 floats")
        != std::string::npos);
}

TEST_CASE("async store makes one step per push and answers each at once with its "
          "own version",
          "[store][async]") {
  store_fixture f("async", 3);
  for (uint32_t i = 0; i < 3; ++i)
    f.watch(i);
  float applied = 0;
  for (uint32_t i = 0; i < 3; ++i) {
    const float value = static_cast<float>(i + 1);
    f.push(i, f.make_push(i, 0, i, filled(parameter_count, value)));
    applied += value;
    auto r = f.take(i);
    REQUIRE(r.params);
    CHECK(r.params->version == i + 1);
    CHECK(r.params->staleness == 0); // each pushed at the version it last saw
    check_values(*r.params, shifted(applied));
    for (uint32_t other = 0; other < 3; ++other)
      CHECK(f.take(other).empty()); // only the pusher is answered
  }
  auto stats = f.stats();
  CHECK(stats.version == 3);
  CHECK(stats.pushes == 3);
  check_values(f.current_params(), shifted(6.0f)); // 1 + 2 + 3
}

TEST_CASE("async staleness is the version at apply minus the version pushed from",
          "[store][async][staleness]") {
  store_fixture f("async", 2);
  f.watch(0);
  f.watch(1);
  // Both computed from version 0; the second arrives after the first's step.
  f.push(0, f.make_push(0, 0, 0, filled(parameter_count, 1.0f)));
  f.push(1, f.make_push(1, 0, 0, filled(parameter_count, 1.0f)));
  auto first = f.take(0);
  auto second = f.take(1);
  REQUIRE(first.params);
  REQUIRE(second.params);
  CHECK(first.params->version == 1);
  CHECK(first.params->staleness == 0);
  CHECK(second.params->version == 2);
  CHECK(second.params->staleness == 1);

  // Replica 0 pushes from version 1 while the store is at 2: staleness 1. A
  // slow replica 1 pushes from version 0 while the store is at 3: staleness 3.
  f.push(0, f.make_push(0, 1, 1, filled(parameter_count, 1.0f)));
  auto third = f.take(0);
  REQUIRE(third.params);
  CHECK(third.params->staleness == 1);
  f.push(1, f.make_push(1, 1, 0, filled(parameter_count, 1.0f)));
  auto slow = f.take(1);
  REQUIRE(slow.params);
  CHECK(slow.params->staleness == 3);
  CHECK(slow.params->version == 4);

  auto stats = f.stats();
  CHECK(stats.pushes == 4);
  CHECK(stats.staleness_sum == 0 + 1 + 1 + 3);
  CHECK(stats.staleness_max == 3);
  CHECK(stats.version == 4);
}

TEST_CASE("sync store refuses bad gradients with troupe errors and stays unchanged",
          "[store][sync][errors]") {
  store_fixture f("sync", 2);
  f.watch(0);
  f.watch(1);
  // Round 0 closes normally, so the store is at version 1, round 1.
  f.push(0, f.make_push(0, 0, 0, filled(parameter_count, 1.0f)));
  f.push(1, f.make_push(1, 0, 0, filled(parameter_count, 3.0f)));
  REQUIRE(f.take(0).params);
  REQUIRE(f.take(1).params);
  const auto before = f.current_params();
  REQUIRE(before.version == 1);
  check_values(before, shifted(2.0f));

  uint64_t refusals = 0;
  auto expect_refusal = [&](push_msg msg, troupe_errc code) {
    ++refusals;
    f.push(0, std::move(msg));
    check_troupe_error(f.take(0), code);
    CHECK(f.take(1).empty());
  };

  SECTION("a gradient of the wrong size") {
    expect_refusal(f.make_push(0, 1, 1, filled(parameter_count - 1, 1.0f)),
                   troupe_errc::bad_gradient);
    expect_refusal(f.make_push(0, 1, 1, shared_floats{}), troupe_errc::bad_gradient);
  }
  SECTION("a gradient holding NaN") {
    std::vector<float> values(parameter_count, 1.0f);
    values[3] = std::numeric_limits<float>::quiet_NaN();
    expect_refusal(
      f.make_push(0, 1, 1, shared_floats{std::make_shared<const std::vector<float>>(values)}),
      troupe_errc::bad_gradient);
  }
  SECTION("a gradient holding Inf") {
    std::vector<float> values(parameter_count, 1.0f);
    values[parameter_count - 1] = -std::numeric_limits<float>::infinity();
    expect_refusal(
      f.make_push(0, 1, 1, shared_floats{std::make_shared<const std::vector<float>>(values)}),
      troupe_errc::bad_gradient);
  }
  SECTION("a gradient for a closed round") {
    expect_refusal(f.make_push(0, 0, 0, filled(parameter_count, 1.0f)),
                   troupe_errc::stale_round);
  }
  SECTION("a gradient for a round that has not started") {
    expect_refusal(f.make_push(0, 2, 1, filled(parameter_count, 1.0f)),
                   troupe_errc::unexpected_round);
  }
  SECTION("a gradient from a replica the store does not know") {
    expect_refusal(f.make_push(5, 1, 1, filled(parameter_count, 1.0f)),
                   troupe_errc::unknown_replica);
  }
  SECTION("a second push in the same round") {
    f.push(0, f.make_push(0, 1, 1, filled(parameter_count, 1.0f)));
    CHECK(f.take(0).empty()); // the first one waits for replica 1
    expect_refusal(f.make_push(0, 1, 1, filled(parameter_count, 100.0f)),
                   troupe_errc::duplicate_push);
    // The round still closes with the first push, not the duplicate.
    f.push(1, f.make_push(1, 1, 1, filled(parameter_count, 3.0f)));
    auto a = f.take(0);
    auto b = f.take(1);
    REQUIRE(a.params);
    REQUIRE(b.params);
    CHECK(a.params->version == 2);
    check_values(*a.params, shifted(4.0f));
    CHECK(f.stats().rejected == refusals);
    return;
  }

  // Refused: no step, the same values, one rejection counted per refusal.
  const auto after = f.current_params();
  CHECK(after.version == before.version);
  CHECK(after.round == before.round);
  CHECK(same_bytes(after.values, before.values));
  auto stats = f.stats();
  CHECK(stats.version == 1);
  CHECK(stats.pushes == 2);
  CHECK(stats.rejected == refusals);
}

TEST_CASE("async store refuses non-finite and wrong-size gradients too",
          "[store][async][errors]") {
  store_fixture f("async", 1);
  f.watch(0);
  std::vector<float> values(parameter_count, 1.0f);
  values[0] = std::numeric_limits<float>::infinity();
  f.push(0, f.make_push(0, 0, 0,
                        shared_floats{std::make_shared<const std::vector<float>>(values)}));
  check_troupe_error(f.take(0), troupe_errc::bad_gradient);
  f.push(0, f.make_push(0, 0, 0, filled(parameter_count + 1, 1.0f)));
  check_troupe_error(f.take(0), troupe_errc::bad_gradient);
  const auto params = f.current_params();
  CHECK(params.version == 0);
  check_values(params, initial_parameters());
  CHECK(f.stats().rejected == 2);
}

TEST_CASE("sync store takes a 0-sample push without a gradient and without weight",
          "[store][sync]") {
  store_fixture f("sync", 3);
  for (uint32_t i = 0; i < 3; ++i)
    f.watch(i);
  f.push(0, f.make_push(0, 0, 0, filled(parameter_count, 1.0f), 1));
  f.push(1, f.make_push(1, 0, 0, filled(parameter_count, 4.0f), 2));
  f.push(2, f.make_push(2, 0, 0, shared_floats{}, 0));
  for (uint32_t i = 0; i < 3; ++i) {
    auto r = f.take(i);
    REQUIRE(r.params);
    CHECK(r.params->version == 1);
    check_values(*r.params, shifted(3.0f)); // (1 * 1 + 2 * 4) / 3
  }
}
