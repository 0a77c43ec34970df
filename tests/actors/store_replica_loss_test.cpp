// The variable store when a replica dies: an aborting run stops it, a
// continuing one closes the round over the survivors, and a gradient pushed
// before the death still counts.
#include <catch2/catch.hpp>

#include "tests/actors/store_fixture.hpp"

using namespace troupe;
using namespace troupe::testing;

TEST_CASE("in an aborting run a replica's death stops the store: no round closes without it",
          "[store][sync][failure]") {
  store_fixture f("sync", 3, [](store_config& o) { o.on_replica_loss = replica_loss_action::abort; });
  for (uint32_t i = 0; i < 3; ++i)
    f.watch(i);
  f.push(0, f.make_push(0, 0, 0, filled(parameter_count, 1.0f)));
  f.push(1, f.make_push(1, 0, 0, filled(parameter_count, 3.0f)));
  CHECK(f.take(0).empty());
  CHECK(f.take(1).empty());

  caf::anon_send_exit(f.dummies[2], caf::exit_reason::user_shutdown);
  f.sched.run();
  // The open pushes are answered with the loss, not with a step ...
  check_troupe_error(f.take(0), troupe_errc::replica_lost);
  check_troupe_error(f.take(1), troupe_errc::replica_lost);
  // ... and so is every later one, even of a full round of the survivors.
  f.push(0, f.make_push(0, 0, 0, filled(parameter_count, 1.0f)));
  check_troupe_error(f.take(0), troupe_errc::replica_lost);
  const auto after = f.current_params();
  CHECK(after.version == 0);
  check_values(after, initial_parameters());
  CHECK(f.stats().rejected == 1);
}

TEST_CASE("sync store closes the round over the others when a watched replica dies",
          "[store][sync][failure]") {
  store_fixture f("sync", 3);
  for (uint32_t i = 0; i < 3; ++i)
    f.watch(i);
  f.push(0, f.make_push(0, 0, 0, filled(parameter_count, 1.0f)));
  f.push(1, f.make_push(1, 0, 0, filled(parameter_count, 3.0f)));
  CHECK(f.take(0).empty());
  CHECK(f.take(1).empty());

  caf::anon_send_exit(f.dummies[2], caf::exit_reason::user_shutdown);
  f.sched.run();
  auto a = f.take(0);
  auto b = f.take(1);
  REQUIRE(a.params);
  REQUIRE(b.params);
  CHECK(a.params->version == 1);
  check_values(*a.params, shifted(2.0f)); // mean of 1 and 3
  CHECK(f.stats().live_replicas == 2);
  // Every answer from now on names the loss: round 0, replica 2, nothing pushed.
  CHECK(a.params->losses == std::vector<replica_loss>{{0, 2, false}});
  CHECK(b.params->losses == a.params->losses);

  // The next round needs only the two that are left.
  f.push(1, f.make_push(1, 1, 1, filled(parameter_count, 1.0f)));
  f.push(0, f.make_push(0, 1, 1, filled(parameter_count, 1.0f)));
  auto c = f.take(0);
  REQUIRE(c.params);
  CHECK(c.params->version == 2);
  check_values(*c.params, shifted(3.0f));
  CHECK(c.params->losses == std::vector<replica_loss>{{0, 2, false}});
  CHECK(f.current_params().losses == c.params->losses);
  // And the dead replica's index is no longer accepted.
  f.push(2, f.make_push(2, 2, 2, filled(parameter_count, 1.0f)));
  check_troupe_error(f.take(2), troupe_errc::unknown_replica);
}

TEST_CASE("a replica lost after pushing its round is answered as share_used",
          "[store][sync][failure]") {
  store_fixture f("sync", 3);
  for (uint32_t i = 0; i < 3; ++i)
    f.watch(i);
  f.push(2, f.make_push(2, 0, 0, filled(parameter_count, 3.0f)));
  caf::anon_send_exit(f.dummies[2], caf::exit_reason::user_shutdown);
  f.sched.run();
  f.push(0, f.make_push(0, 0, 0, filled(parameter_count, 1.0f)));
  f.push(1, f.make_push(1, 0, 0, filled(parameter_count, 2.0f)));
  auto a = f.take(0);
  REQUIRE(a.params);
  check_values(*a.params, shifted(2.0f)); // its gradient still counts
  CHECK(a.params->losses == std::vector<replica_loss>{{0, 2, true}});
  // Async keeps no losses: its replicas have no shared plan to change.
  store_fixture g("async", 2);
  g.watch(0);
  g.watch(1);
  caf::anon_send_exit(g.dummies[1], caf::exit_reason::user_shutdown);
  g.sched.run();
  CHECK(g.current_params().losses.empty());
}
