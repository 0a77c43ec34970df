// A replica replaced by a respawn, as a sync shard's policy sees it: the
// dead actor's push of the open round is refused and pushed again by the
// new one; a round its push closed here already answers the new one's
// repeat without using it.
#include <catch2/catch.hpp>

#include "actors/policy/sync_policy.hpp"
#include "tests/actors/fake_store.hpp"

using namespace troupe;
using namespace troupe::testing;

TEST_CASE("a sync shard forgets a replaced replica's push of the open round and closes it "
          "on the new one's, with the same step",
          "[policy][respawn]") {
  constexpr size_t count = 2;
  sync_policy policy;
  fake_store store(count);
  for (uint32_t r = 0; r < 2; ++r)
    policy.on_replica_joined(r);
  accept(policy, make_push(0, 0, 4, filled(count, 1.0f), 10), store);
  accept(policy, make_push(1, 0, 4, filled(count, 3.0f), 11), store);
  REQUIRE(store.steps.size() == 1);
  const auto first_step = store.steps[0];
  // Round 1: replica 1 pushes, then its actor dies and is replaced.
  accept(policy, make_push(1, 1, 4, filled(count, 3.0f), 12), store);
  policy.on_replica_replaced(1, store);
  CHECK(store.refused_tickets == std::vector<uint64_t>{12});
  CHECK(store.refusals.back().first == troupe_errc::replica_lost);
  accept(policy, make_push(0, 1, 4, filled(count, 1.0f), 13), store);
  CHECK(store.steps.size() == 1); // still waiting for replica 1
  accept(policy, make_push(1, 1, 4, filled(count, 3.0f), 14), store);
  REQUIRE(store.steps.size() == 2);
  CHECK(store.steps[1] == first_step);
  CHECK(policy.next_round() == 2);
  CHECK(store.answers == std::vector<uint64_t>{10, 11, 13, 14});
}

TEST_CASE("a sync shard whose round closed on a replaced replica's push answers the new "
          "actor's repeat of that round unused, once",
          "[policy][respawn]") {
  constexpr size_t count = 2;
  sync_policy policy;
  fake_store store(count);
  for (uint32_t r = 0; r < 2; ++r)
    policy.on_replica_joined(r);
  accept(policy, make_push(0, 0, 4, filled(count, 1.0f), 10), store);
  accept(policy, make_push(1, 0, 4, filled(count, 3.0f), 11), store); // closes round 0
  policy.on_replica_replaced(1, store); // another shard still waits for round 0
  CHECK(store.refused_tickets.empty());
  accept(policy, make_push(1, 0, 4, filled(count, 3.0f), 12), store);
  CHECK(store.unused == std::vector<uint64_t>{12});
  CHECK(store.steps.size() == 1); // not applied twice
  CHECK(policy.next_round() == 1);
  // A second repeat is stale, as from any replica.
  auto again = policy.on_push(make_push(1, 0, 4, filled(count, 3.0f), 13), store);
  REQUIRE(again);
  CHECK(again->code == troupe_errc::stale_round);
  // Round 1 goes on as usual.
  accept(policy, make_push(0, 1, 4, filled(count, 1.0f), 14), store);
  accept(policy, make_push(1, 1, 4, filled(count, 3.0f), 15), store);
  CHECK(store.steps.size() == 2);
}
