// The dial between sync and async against a fake store_port: bounded
// staleness (ssp), backup replicas, the staleness-aware learning rate and
// the delayed policy.
#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include "actors/policy/delayed_policy.hpp"
#include "actors/policy/ssp_policy.hpp"
#include "actors/policy/sync_policy.hpp"
#include "actors/policy/update_policy.hpp"
#include "tests/actors/fake_store.hpp"

using namespace troupe;
using namespace troupe::testing;

TEST_CASE("ssp applies every push at once and answers a replica until it is K ahead of the "
          "slowest, and no further",
          "[policy][ssp]") {
  constexpr size_t count = 3;
  constexpr uint32_t staleness = 2;
  ssp_policy policy(policy_settings{staleness, 0, staleness_lr_rule::none});
  fake_store store(count);
  for (uint32_t r = 0; r < 3; ++r)
    policy.on_replica_joined(r);
  // Replica 2 is held back; replica 0 pushes on as long as it is answered.
  uint64_t ticket = 0;
  for (uint64_t k = 1; k <= staleness; ++k) {
    accept(policy, make_push(0, k, 1, filled(count, 1.0f), ticket++), store);
    CHECK(store.steps.size() == k);   // applied on arrival
    CHECK(store.answers.size() == k); // and answered: k <= K ahead
  }
  // Its push number K + 1 is applied, but its answer waits.
  accept(policy, make_push(0, 3, 1, filled(count, 1.0f), ticket++), store);
  CHECK(store.steps.size() == 3);
  CHECK(store.answers.size() == 2);
  // Replica 1 catches up to 1 push: the slowest (replica 2) is still at 0.
  accept(policy, make_push(1, 1, 1, filled(count, 1.0f), ticket++), store);
  CHECK(store.answers.size() == 3);
  CHECK(store.answers.back() == 3);
  // The slowest pushes once: replica 0 is now exactly K ahead and answered.
  accept(policy, make_push(2, 1, 1, filled(count, 1.0f), ticket++), store);
  REQUIRE(store.answers.size() == 5);
  // Replica 0's held answer (ticket 2) and replica 2's own (ticket 4).
  CHECK(std::vector<uint64_t>(store.answers.begin() + 3, store.answers.end())
        == std::vector<uint64_t>{2, 4});
  CHECK(store.steps.size() == 5);
  CHECK(policy.next_round() == 5);
}

TEST_CASE("ssp answers a held push when the slowest replica is lost", "[policy][ssp]") {
  constexpr size_t count = 2;
  ssp_policy policy(policy_settings{1, 0, staleness_lr_rule::none});
  fake_store store(count);
  policy.on_replica_joined(0);
  policy.on_replica_joined(1);
  accept(policy, make_push(0, 1, 1, filled(count, 1.0f), 7), store);
  accept(policy, make_push(0, 2, 1, filled(count, 1.0f), 8), store);
  CHECK(store.answers == std::vector<uint64_t>{7});
  policy.on_replica_lost(1, store);
  CHECK(store.answers == std::vector<uint64_t>{7, 8});
}

TEST_CASE("backup replicas close a round on the first R - b pushes, apply exactly those in "
          "replica order, and answer and drop the late one",
          "[policy][sync][backup]") {
  constexpr size_t count = 3;
  sync_policy policy(1); // one backup replica
  fake_store store(count);
  for (uint32_t r = 0; r < 3; ++r)
    policy.on_replica_joined(r);
  accept(policy, make_push(2, 0, 4, filled(count, 3.0f), 12), store);
  CHECK(store.steps.empty());
  accept(policy, make_push(0, 0, 4, filled(count, 1.0f), 10), store);
  // Two of three: the round closes with the mean of replicas 0 and 2.
  REQUIRE(store.steps.size() == 1);
  const float mean = 0.5f * 1.0f + 0.5f * 3.0f;
  CHECK(bitwise_equal(store.steps[0], std::vector<float>(count, mean)));
  CHECK(store.answers == std::vector<uint64_t>{10, 12});
  CHECK(policy.next_round() == 1);
  // Replica 1 is late for round 0: answered with the new parameters, dropped.
  accept(policy, make_push(1, 0, 4, filled(count, 2.0f), 11), store);
  CHECK(store.steps.size() == 1);
  CHECK(store.answers == std::vector<uint64_t>{10, 12, 11});
  CHECK(policy.report().dropped == 1);
  CHECK(store.rounds_closed == 1);
}

TEST_CASE("staleness-aware learning rate steps a gradient of staleness t at lr / max(1, t) "
          "under async and ssp, and at lr without the setting",
          "[policy][staleness-lr]") {
  constexpr size_t count = 2;
  for (const std::string mode : {"async", "ssp"}) {
    INFO(mode);
    auto aware_settings = settings_for(mode, 4);
    aware_settings.staleness_lr = staleness_lr_rule::inverse;
    auto aware = build_policy(mode, aware_settings);
    auto plain = build_policy(mode, settings_for(mode, 4));
    fake_store aware_store(count);
    fake_store plain_store(count);
    aware->on_replica_joined(0);
    plain->on_replica_joined(0);
    const uint64_t stalenesses[] = {0, 1, 2, 5};
    for (uint64_t t : stalenesses) {
      accept(*aware, make_push(0, t, 1, filled(count, 1.0f), t, t), aware_store);
      accept(*plain, make_push(0, t, 1, filled(count, 1.0f), t, t), plain_store);
    }
    CHECK(aware_store.lr_scales == std::vector<float>{1.0f, 1.0f, 0.5f, 0.2f});
    CHECK(plain_store.lr_scales == std::vector<float>{1.0f, 1.0f, 1.0f, 1.0f});
  }
}

TEST_CASE("the delayed policy hands round r the parameters of store round r + 1 - K at once "
          "when they exist, holds the answer that needs the open round's step, and reduces "
          "each round in replica order",
          "[policy][delayed]") {
  constexpr size_t count = 2;
  delayed_policy policy(2); // K = 2
  fake_store store(count);
  policy.on_replica_joined(0);
  policy.on_replica_joined(1);
  using answer = std::pair<uint64_t, uint64_t>;
  // Round 0 wants store round -1: clamped to the oldest the store has.
  accept(policy, make_push(1, 0, 1, filled(count, 2.0f), 10), store);
  accept(policy, make_push(0, 0, 1, filled(count, 4.0f), 11), store);
  CHECK(store.answer_backs == std::vector<answer>{{10, 1}, {11, 1}});
  REQUIRE(store.steps.size() == 1); // round 0 closed over both, in replica order
  CHECK(bitwise_equal(store.steps[0], std::vector<float>(count, 0.5f * 4.0f + 0.5f * 2.0f)));
  CHECK(policy.next_round() == 1);
  // Replica 0 runs ahead: round 1 wants store round 0 (one step back), round
  // 2 store round 1 (the current one), round 3 store round 2, which does not
  // exist until round 1 closes: held.
  accept(policy, make_push(0, 1, 1, filled(count, 1.0f), 12), store);
  accept(policy, make_push(0, 2, 1, filled(count, 1.0f), 13), store);
  accept(policy, make_push(0, 3, 1, filled(count, 1.0f), 14), store);
  CHECK(store.answer_backs == std::vector<answer>{{10, 1}, {11, 1}, {12, 1}, {13, 0}});
  CHECK(refuse(policy, make_push(0, 4, 1, filled(count, 1.0f), 15), store,
               troupe_errc::unexpected_round)
          .find("more than 2 rounds ahead") != std::string::npos);
  // Replica 1 pushes round 1: answered from one step back, then the round
  // closes and the held answer goes out with the new current version.
  accept(policy, make_push(1, 1, 1, filled(count, 3.0f), 16), store);
  CHECK(store.answer_backs
        == std::vector<answer>{{10, 1}, {11, 1}, {12, 1}, {13, 0}, {16, 1}, {14, 0}});
  REQUIRE(store.steps.size() == 2);
  CHECK(bitwise_equal(store.steps[1], std::vector<float>(count, 0.5f * 1.0f + 0.5f * 3.0f)));
  CHECK(policy.next_round() == 2);
  CHECK(store.rounds_closed == 2);
  CHECK(traits_of(policy_spec{"delayed", {2, 0, staleness_lr_rule::none}}).history_depth == 1);
}

TEST_CASE("the delayed policy closes the open round over the survivors when a replica is "
          "lost and drops its pushes for later rounds",
          "[policy][delayed]") {
  constexpr size_t count = 2;
  delayed_policy policy(1);
  fake_store store(count);
  for (uint32_t r = 0; r < 3; ++r)
    policy.on_replica_joined(r);
  accept(policy, make_push(0, 0, 1, filled(count, 1.0f), 1), store);
  accept(policy, make_push(2, 0, 1, filled(count, 1.0f), 2), store);
  accept(policy, make_push(2, 1, 1, filled(count, 5.0f), 3), store); // held: round 1 = 0 + K
  policy.on_replica_lost(2, store);
  REQUIRE(policy.report().losses.size() == 1);
  CHECK(policy.report().losses[0] == replica_loss{0, 2, true});
  CHECK(store.steps.size() == 0); // replica 1 has not pushed round 0
  accept(policy, make_push(1, 0, 1, filled(count, 1.0f), 4), store);
  CHECK(store.steps.size() == 1);
  accept(policy, make_push(0, 1, 1, filled(count, 1.0f), 5), store);
  accept(policy, make_push(1, 1, 1, filled(count, 1.0f), 6), store);
  // Round 1 closed over replicas 0 and 1 only: replica 2's 5.0 is gone.
  REQUIRE(store.steps.size() == 2);
  CHECK(bitwise_equal(store.steps[1], std::vector<float>(count, 1.0f)));
}
