// The update policies against a fake store_port: no CAF, just the decisions a
// policy makes (what to take or refuse, when to step, what to sum, whom to
// answer, when a round closes, which losses replicas must re-plan around).
// The dial's policies between sync and async: dial_policies_test.cpp.
#include <catch2/catch.hpp>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "actors/policy/async_policy.hpp"
#include "actors/report/metrics_log.hpp"
#include "actors/policy/sync_policy.hpp"
#include "tests/actors/fake_store.hpp"

using namespace troupe;
using namespace troupe::testing;

TEST_CASE("the registry builds every policy it lists, describes each, and refuses unknown "
          "modes and settings that do not apply",
          "[policy]") {
  // The registry's list is what option checks and --help offer; sync (the default) first.
  const auto names = policy_names();
  REQUIRE(names.size() >= 4);
  CHECK(names[0] == "sync");
  CHECK(names[1] == "async");
  for (const auto& mode : names) {
    INFO(mode);
    const policy_spec spec{mode, settings_for(mode, 2)};
    CHECK_FALSE(check_policy_spec(spec));
    CHECK(make_update_policy(spec));
    CHECK_FALSE(find_policy(mode)->summary.empty());
  }
  auto bogus = make_update_policy(policy_spec{"bogus", {}});
  REQUIRE_FALSE(bogus);
  CHECK(contains(describe(bogus.error()), "--mode: 'bogus' (expected sync, async"));
  // Staleness 0 is lockstep: ssp is then sync, bits and buffers and all.
  const auto lockstep = traits_of(policy_spec{"ssp", {0, 0, staleness_lr_rule::none}});
  CHECK(lockstep.reproducible);
  CHECK(lockstep.replicas_wait_for_rounds);
  CHECK(lockstep.steps_per_round);
  CHECK_FALSE(traits_of(policy_spec{"ssp", {1, 0, staleness_lr_rule::none}}).reproducible);
  // Backup replicas give up the bits, and a late replica may still read.
  const auto backups = traits_of(policy_spec{"sync", {0, 1, staleness_lr_rule::none}});
  CHECK_FALSE(backups.reproducible);
  CHECK_FALSE(backups.replicas_wait_for_rounds);
  CHECK(backups.reports_staleness);
  CHECK(traits_of(policy_spec{"delayed", {3, 0, staleness_lr_rule::none}}).history_depth == 2);
  // A setting another policy reads is refused, naming the policies it works with.
  auto stale_sync = check_policy_spec(policy_spec{"sync", {2, 0, staleness_lr_rule::none}});
  CHECK(contains(describe(stale_sync), "--staleness=2 works with --mode=ssp or delayed, not sync"));
  auto delayed_zero = check_policy_spec(policy_spec{"delayed", {}});
  CHECK(contains(describe(delayed_zero), "--mode=delayed needs --staleness=K with K >= 1"));
  // A second policy of a taken name is refused.
  CHECK(register_policy(*find_policy("sync")));
}

TEST_CASE("sync answers nobody until every live replica has pushed the round",
          "[policy][sync]") {
  constexpr size_t count = 5;
  sync_policy policy;
  fake_store store(count);
  for (uint32_t r = 0; r < 3; ++r)
    policy.on_replica_joined(r);
  CHECK(policy.next_round() == 0);

  accept(policy, make_push(0, 0, 4, filled(count, 1.0f), 10), store);
  accept(policy, make_push(1, 0, 4, filled(count, 2.0f), 11), store);
  CHECK(store.steps.empty());
  CHECK(store.answers.empty());
  CHECK(policy.next_round() == 0);

  accept(policy, make_push(2, 0, 4, filled(count, 3.0f), 12), store);
  REQUIRE(store.steps.size() == 1);
  CHECK(store.answers == std::vector<uint64_t>{10, 11, 12});
  CHECK(policy.next_round() == 1);
  for (float v : store.steps[0])
    CHECK(v == Approx(2.0f).margin(1e-6)); // mean of 1, 2, 3

  // The next round starts empty: one push does not close it.
  accept(policy, make_push(1, 1, 4, filled(count, 1.0f), 13), store);
  CHECK(store.steps.size() == 1);
  CHECK(store.answers.size() == 3);
}

TEST_CASE("sync reduces in replica order weighted by batch size, whatever the "
          "arrival order",
          "[policy][sync]") {
  // Values whose float sum depends on the order of addition: summed in arrival
  // order 2, 0, 1 the result would differ from index order 0, 1, 2. The
  // weights are powers of two, so every product is exact and only the order of
  // the additions (not FMA contraction) decides the bits.
  constexpr size_t count = 3;
  const std::vector<std::vector<float>> grads = {
    {2e8f, 1.0f, 0.5f}, {4.0f, -3e7f, 0.25f}, {-4e8f, 3e7f, 1e-8f}};
  const std::vector<uint32_t> batch = {2, 1, 1}; // weights 1/2, 1/4, 1/4
  const float total = 4.0f;

  auto run = [&](const std::vector<uint32_t>& arrival) {
    sync_policy policy;
    fake_store store(count);
    for (uint32_t r = 0; r < 3; ++r)
      policy.on_replica_joined(r);
    for (auto r : arrival)
      accept(policy,
             make_push(r, 0, batch[r], std::make_shared<const std::vector<float>>(grads[r]),
                       100 + r),
             store);
    REQUIRE(store.steps.size() == 1);
    CHECK(store.answers.size() == 3);
    return store.steps[0];
  };

  const auto in_order = run({0, 1, 2});
  const auto shuffled = run({2, 0, 1});
  const auto reversed = run({2, 1, 0});
  CHECK(bitwise_equal(in_order, shuffled));
  CHECK(bitwise_equal(in_order, reversed));

  // The closed form, computed the way the policy promises: index order, float
  // weights batch / total.
  std::vector<float> expected(count, 0.0f);
  for (size_t r = 0; r < 3; ++r) {
    const float weight = static_cast<float>(batch[r]) / total;
    for (size_t i = 0; i < count; ++i)
      expected[i] = r == 0 ? weight * grads[r][i] : expected[i] + weight * grads[r][i];
  }
  CHECK(bitwise_equal(in_order, expected));
  CHECK(in_order[0] == 0.0f); // (1e8 + 1) - 1e8 in float

  // And the arrival-order sum really is different: the test would notice.
  std::vector<float> arrival_sum(count, 0.0f);
  for (size_t r : {2, 0, 1}) {
    const float weight = static_cast<float>(batch[r]) / total;
    for (size_t i = 0; i < count; ++i)
      arrival_sum[i] += weight * grads[r][i];
  }
  CHECK_FALSE(bitwise_equal(expected, arrival_sum));
}

TEST_CASE("sync refuses unknown replicas, stale and future rounds and duplicates, "
          "saying why",
          "[policy][sync]") {
  constexpr size_t count = 2;
  sync_policy policy;
  fake_store store(count);
  policy.on_replica_joined(0);
  policy.on_replica_joined(1);

  auto why = refuse(policy, make_push(7, 0, 1, filled(count, 1.0f), 0), store,
                    troupe_errc::unknown_replica);
  CHECK(contains(why, "replica 7 is not a live member of this run"));
  why = refuse(policy, make_push(0, 1, 1, filled(count, 1.0f), 0), store,
               troupe_errc::unexpected_round);
  CHECK(contains(why, "gradient from replica 0 is for round 1, but the store is at round 0"));

  accept(policy, make_push(0, 0, 1, filled(count, 1.0f), 1), store);
  why = refuse(policy, make_push(0, 0, 1, filled(count, 1.0f), 2), store,
               troupe_errc::duplicate_push);
  CHECK(contains(why, "replica 0 pushed twice in round 0"));
  accept(policy, make_push(1, 0, 1, filled(count, 1.0f), 3), store);
  REQUIRE(policy.next_round() == 1);

  why = refuse(policy, make_push(0, 0, 1, filled(count, 1.0f), 4), store,
               troupe_errc::stale_round);
  CHECK(contains(why, "gradient from replica 0 is for round 0, which is closed (the store "
                      "is at round 1)"));
  refuse(policy, make_push(0, 2, 1, filled(count, 1.0f), 4), store,
         troupe_errc::unexpected_round);
  // Refusals change nothing: one step, the two answers and the one closed
  // round of round 0, and round 1 still takes both replicas.
  CHECK(store.steps.size() == 1);
  CHECK(store.answers == std::vector<uint64_t>{1, 3});
  CHECK(store.rounds_closed == 1);
  CHECK(policy.next_round() == 1);
  accept(policy, make_push(0, 1, 1, filled(count, 1.0f), 5), store);
  accept(policy, make_push(1, 1, 1, filled(count, 1.0f), 6), store);
  CHECK(store.steps.size() == 2);
  CHECK(store.answers == std::vector<uint64_t>{1, 3, 5, 6});
}

TEST_CASE("sync closes a round over the others when a replica is lost",
          "[policy][sync][failure]") {
  constexpr size_t count = 4;
  sync_policy policy;
  fake_store store(count);
  for (uint32_t r = 0; r < 3; ++r)
    policy.on_replica_joined(r);

  accept(policy, make_push(0, 0, 2, filled(count, 1.0f), 20), store);
  accept(policy, make_push(1, 0, 2, filled(count, 3.0f), 21), store);
  CHECK(store.steps.empty());
  policy.on_replica_lost(2, store);
  REQUIRE(store.steps.size() == 1);
  for (float v : store.steps[0])
    CHECK(v == 2.0f); // (1 + 3) / 2, both weights exactly 1/2
  CHECK(store.answers == std::vector<uint64_t>{20, 21});
  CHECK(policy.next_round() == 1);

  // The loss is kept for the replicas: lost in round 0, nothing pushed there.
  CHECK(policy.report().losses == std::vector<replica_loss>{{0, 2, false}});

  // The lost replica is unknown from now on, and rounds need only the others.
  refuse(policy, make_push(2, 1, 2, filled(count, 1.0f), 0), store,
         troupe_errc::unknown_replica);
  accept(policy, make_push(1, 1, 2, filled(count, 5.0f), 22), store);
  accept(policy, make_push(0, 1, 2, filled(count, 7.0f), 23), store);
  REQUIRE(store.steps.size() == 2);
  for (float v : store.steps[1])
    CHECK(v == 6.0f);
  CHECK(policy.next_round() == 2);

  // A loss in a round nobody has pushed yet applies nothing.
  policy.on_replica_lost(1, store);
  CHECK(store.steps.size() == 2);
  CHECK(store.answers.size() == 4);
  CHECK(policy.report().losses == std::vector<replica_loss>{{0, 2, false}, {2, 1, false}});
  // A replica lost twice (or never known) is recorded once.
  policy.on_replica_lost(1, store);
  policy.on_replica_lost(9, store);
  CHECK(policy.report().losses.size() == 2);
}

TEST_CASE("sync counts a gradient pushed by a replica that is lost later in the round",
          "[policy][sync][failure]") {
  constexpr size_t count = 2;
  sync_policy policy;
  fake_store store(count);
  for (uint32_t r = 0; r < 3; ++r)
    policy.on_replica_joined(r);
  accept(policy, make_push(2, 0, 1, filled(count, 4.0f), 30), store);
  policy.on_replica_lost(2, store); // replicas 0 and 1 still owe the round
  CHECK(store.steps.empty());
  accept(policy, make_push(0, 0, 1, filled(count, 1.0f), 31), store);
  CHECK(store.steps.empty());
  accept(policy, make_push(1, 0, 1, filled(count, 1.0f), 32), store);
  REQUIRE(store.steps.size() == 1);
  for (float v : store.steps[0])
    CHECK(v == Approx(2.0f).margin(1e-6)); // (1 + 1 + 4) / 3
  CHECK(store.answers == std::vector<uint64_t>{31, 32, 30});
  // Its share of round 0 was used: survivors must not re-plan it.
  CHECK(policy.report().losses == std::vector<replica_loss>{{0, 2, true}});
}

TEST_CASE("sync lets a 0-sample push take part without weight", "[policy][sync]") {
  constexpr size_t count = 3;
  sync_policy policy;
  fake_store store(count);
  for (uint32_t r = 0; r < 3; ++r)
    policy.on_replica_joined(r);

  // Replica 2 has nothing in this short last round: no gradient at all.
  accept(policy, make_push(2, 0, 0, nullptr, 42), store);
  accept(policy, make_push(0, 0, 1, filled(count, 1.0f), 40), store);
  CHECK(store.steps.empty());
  accept(policy, make_push(1, 0, 1, filled(count, 3.0f), 41), store);
  REQUIRE(store.steps.size() == 1);
  for (float v : store.steps[0])
    CHECK(v == 2.0f); // weights 1/2 and 1/2; replica 2 adds nothing
  CHECK(store.answers == std::vector<uint64_t>{40, 41, 42});

  // A single contributor is applied as it is, unscaled.
  auto only = filled(count, 5.0f);
  accept(policy, make_push(0, 1, 0, nullptr, 43), store);
  accept(policy, make_push(1, 1, 2, only, 44), store);
  accept(policy, make_push(2, 1, 0, nullptr, 45), store);
  REQUIRE(store.steps.size() == 2);
  CHECK(bitwise_equal(store.steps[1], *only));

  // A round in which nobody had samples steps nothing but answers everyone.
  for (uint32_t r = 0; r < 3; ++r)
    accept(policy, make_push(r, 2, 0, nullptr, 50 + r), store);
  CHECK(store.steps.size() == 2);
  CHECK(store.answers.size() == 9);
  CHECK(policy.next_round() == 3);
}

TEST_CASE("async applies and answers each push at once", "[policy][async]") {
  constexpr size_t count = 3;
  async_policy policy;
  fake_store store(count);
  CHECK(policy.next_round() == 0);

  for (uint32_t r = 0; r < 3; ++r) {
    accept(policy, make_push(r, 0, 4, filled(count, static_cast<float>(r + 1)), 60 + r),
           store);
    REQUIRE(store.steps.size() == r + 1);
    CHECK(store.answers.size() == r + 1);
    CHECK(store.answers.back() == 60 + r);
    for (float v : store.steps.back())
      CHECK(v == static_cast<float>(r + 1)); // applied as pushed, not averaged
  }
  CHECK(policy.next_round() == 3);

  // A 0-sample push is answered but steps nothing.
  accept(policy, make_push(0, 0, 0, nullptr, 70), store);
  CHECK(store.steps.size() == 3);
  CHECK(store.answers.back() == 70);
  CHECK(policy.next_round() == 4);

  // Async takes any replica and any round: staleness, not rounds, is its
  // measure. It has no rounds to close and keeps no losses.
  accept(policy, make_push(9, 123, 1, filled(count, 1.0f), 71), store);
  CHECK(store.answers.back() == 71);
  policy.on_replica_lost(1, store);
  CHECK(store.rounds_closed == 0);
  CHECK(policy.report().losses.empty());
}

namespace {

// Answers by checking that nobody but the pusher still holds its gradient, so
// the replica that gets the answer can reuse its buffer instead of allocating.
struct releasing_store : fake_store {
  using fake_store::fake_store;
  void answer(uint64_t ticket) override {
    fake_store::answer(ticket);
    held_at_answer.push_back(pushed.at(ticket).use_count());
  }
  std::map<uint64_t, std::shared_ptr<const std::vector<float>>> pushed;
  std::vector<long> held_at_answer;
};

} // namespace

TEST_CASE("every policy but delayed lets go of a gradient before it answers its pusher",
          "[policy][sync][async]") {
  constexpr size_t count = 4;
  for (const auto& mode : policy_names()) {
    INFO(mode);
    // Delayed answers first by design (the replica computes on while its round
    // waits) and lets go when the round closes.
    if (traits_of(policy_spec{mode, settings_for(mode, 2)}).history_depth > 0)
      continue;
    auto policy = make_update_policy(policy_spec{mode, settings_for(mode, 2)});
    REQUIRE(policy);
    releasing_store store(count);
    for (uint32_t r = 0; r < 2; ++r)
      (*policy)->on_replica_joined(r);
    for (uint32_t r = 0; r < 2; ++r) {
      auto gradient = filled(count, 1.0f);
      store.pushed[r] = gradient; // the replica's own reference
      accept(**policy, make_push(r, 0, 1, std::move(gradient), r), store);
    }
    REQUIRE(store.held_at_answer.size() == 2);
    CHECK(store.held_at_answer[0] == 1);
    CHECK(store.held_at_answer[1] == 1);
  }
}

TEST_CASE("sync closes each round once, after its step and its answers", "[policy][sync]") {
  constexpr size_t count = 2;
  sync_policy policy;
  fake_store store(count);
  for (uint32_t r = 0; r < 3; ++r)
    policy.on_replica_joined(r);

  // Round 0 by pushes: nothing closes until the last one.
  accept(policy, make_push(1, 0, 1, filled(count, 1.0f), 1), store);
  accept(policy, make_push(0, 0, 1, filled(count, 1.0f), 0), store);
  CHECK(store.rounds_closed == 0);
  accept(policy, make_push(2, 0, 1, filled(count, 1.0f), 2), store);
  CHECK(store.rounds_closed == 1);
  CHECK(store.events
        == std::vector<std::string>{"step", "answer 0", "answer 1", "answer 2", "closed"});

  // A refused push closes nothing.
  refuse(policy, make_push(0, 0, 1, filled(count, 1.0f), 3), store,
         troupe_errc::stale_round);
  CHECK(store.rounds_closed == 1);

  // Round 1 closed by a loss: once, after the answers.
  store.events.clear();
  accept(policy, make_push(0, 1, 1, filled(count, 1.0f), 4), store);
  accept(policy, make_push(1, 1, 1, filled(count, 1.0f), 5), store);
  policy.on_replica_lost(2, store);
  CHECK(store.rounds_closed == 2);
  CHECK(store.events == std::vector<std::string>{"step", "answer 4", "answer 5", "closed"});

  // A loss in an empty round closes nothing; a round without samples closes.
  policy.on_replica_lost(1, store);
  CHECK(store.rounds_closed == 2);
  accept(policy, make_push(0, 2, 0, nullptr, 6), store);
  CHECK(store.rounds_closed == 3);
  CHECK(store.steps.size() == 2);

  // Five more rounds by the one replica left: five more closes.
  for (uint64_t round = 3; round < 8; ++round)
    accept(policy, make_push(0, round, 1, filled(count, 1.0f), 10 + round), store);
  CHECK(store.rounds_closed == 8);
  CHECK(policy.next_round() == 8);
}

TEST_CASE("the policies say whether staleness is worth reporting, and the progress line "
          "shows it then",
          "[policy][metrics]") {
  epoch_record record;
  record.epoch = 1;
  record.staleness_mean = 1.5;
  record.staleness_max = 4;
  for (const auto& mode : policy_names()) {
    INFO(mode);
    record.staleness_reported = traits_of(policy_spec{mode, settings_for(mode, 2)})
                                  .reports_staleness;
    const auto line = progress_line(record, 3);
    CHECK(line.rfind("Epoch 1/3 - ", 0) == 0);
    CHECK(contains(line, "staleness mean 1.50 max 4") == record.staleness_reported);
  }
  CHECK_FALSE(traits_of(policy_spec{"sync", {}}).reports_staleness); // its pushes wait: always 0
  CHECK(traits_of(policy_spec{"async", {}}).reports_staleness);
}
