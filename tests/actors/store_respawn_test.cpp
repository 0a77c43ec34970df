// A store shard with respawns (--on-replica-loss=respawn): it takes pushes
// only from the actor it watches as each replica, so a replaced actor heard
// from again is refused and counted; and it answers for the version before
// only while it still holds it.
#include "tests/actors/store_fixture.hpp"

using namespace troupe;
using namespace troupe::testing;

namespace {

void respawning(store_config& o) { o.on_replica_loss = replica_loss_action::respawn; }

// Registers pusher i itself as replica i of membership epoch `membership`,
// so its pushes come from the watched actor; returns the round the store
// says replica i pushes next.
uint64_t watch_pusher(store_fixture& f, uint32_t i, uint64_t membership = 0) {
  auto self = caf::actor_cast<replica_actor>(caf::actor_cast<caf::strong_actor_ptr>(f.pusher(i)));
  f.pusher(i)->send(f.store, watch_atom::value, i, self, membership);
  f.sched.run();
  std::optional<uint64_t> next;
  f.pusher(i)->receive([&](uint64_t n) { next = n; },
                       caf::after(std::chrono::seconds(0)) >> [] {});
  REQUIRE(next);
  return *next;
}

} // namespace

TEST_CASE("with respawns a shard refuses, counts and never applies a push from an actor "
          "that is not, or no longer, the replica it names",
          "[store][respawn][fencing]") {
  store_fixture f("sync", 2, respawning);
  watch_pusher(f, 0);
  watch_pusher(f, 1);
  f.push(0, f.make_push(0, 0, 0, filled(parameter_count, 1.0f)));
  f.push(1, f.make_push(1, 0, 0, filled(parameter_count, 1.0f)));
  REQUIRE(f.take(0).params);
  REQUIRE(f.take(1).params);
  // Replica 1 is replaced by another actor: pusher 1 is its old one now.
  f.watch(1);
  f.push(1, f.make_push(1, 1, 1, filled(parameter_count, 5.0f)));
  auto fenced = f.take(1);
  REQUIRE(fenced.error);
  CHECK(fenced.error->code() == static_cast<uint8_t>(troupe_errc::fenced));
  CHECK(describe(*fenced.error).find("no longer, that replica") != std::string::npos);
  // Nor may an actor push as a replica it is not.
  f.push(0, f.make_push(1, 1, 1, filled(parameter_count, 5.0f)));
  REQUIRE(f.take(0).error);
  const auto stats = f.stats();
  CHECK(stats.fenced == 2);
  CHECK(stats.version == 1); // round 1 still waits for replica 1's new actor
  check_values(f.current_params(), shifted(1.0f));
}

TEST_CASE("with respawns a shard refuses, counts and never applies a push of a membership "
          "epoch other than the one its replica's actor was watched in",
          "[store][respawn][fencing]") {
  store_fixture f("sync", 1, respawning);
  watch_pusher(f, 0, 3);
  auto stale = f.make_push(0, 0, 0, filled(parameter_count, 5.0f));
  stale.membership = 2;
  f.push(0, stale);
  auto fenced = f.take(0);
  REQUIRE(fenced.error);
  CHECK(fenced.error->code() == static_cast<uint8_t>(troupe_errc::fenced));
  CHECK(describe(*fenced.error)
        == "a push as replica 0 of membership epoch 2; the replica's actor is of epoch 3");
  auto current = f.make_push(0, 0, 0, filled(parameter_count, 1.0f));
  current.membership = 3;
  f.push(0, current);
  REQUIRE(f.take(0).params);
  CHECK(f.stats().fenced == 1);
  CHECK(f.stats().version == 1);
  check_values(f.current_params(), shifted(1.0f));
}

TEST_CASE("a shard names the membership epoch it was spawned in on every answer to the "
          "coordinator and to its replicas",
          "[store][respawn][fencing]") {
  store_fixture f("sync", 1, [](store_config& o) {
    respawning(o);
    o.membership = 4;
  });
  watch_pusher(f, 0, 4);
  auto push = f.make_push(0, 0, 0, filled(parameter_count, 1.0f));
  push.membership = 4;
  f.push(0, push);
  auto answer = f.take(0);
  REQUIRE(answer.params);
  CHECK(answer.params->membership == 4);
  CHECK(f.current_params().membership == 4);
  CHECK(f.stats().membership == 4);
  f.pusher(0)->send(f.store, save_atom::value);
  f.sched.run();
  std::optional<checkpoint_part> part;
  f.pusher(0)->receive([&](checkpoint_part& p) { part = std::move(p); },
                       caf::after(std::chrono::seconds(0)) >> [] {});
  REQUIRE(part);
  CHECK(part->membership == 4);
}

TEST_CASE("a shard tells who awaits a round once that round has closed, at once for one "
          "closed already",
          "[store][respawn][recovery]") {
  store_fixture f("sync", 2, respawning);
  watch_pusher(f, 0);
  watch_pusher(f, 1);
  caf::scoped_actor waiter{f.sys};
  auto answer = [&waiter] {
    std::optional<uint64_t> next;
    waiter->receive([&](uint64_t n) { next = n; },
                    caf::after(std::chrono::seconds(0)) >> [] {});
    return next;
  };
  waiter->send(f.store, await_atom::value, uint64_t{0});
  f.sched.run();
  CHECK_FALSE(answer()); // round 0 is open
  f.push(1, f.make_push(1, 0, 0, filled(parameter_count, 1.0f)));
  CHECK_FALSE(answer()); // one push of two
  f.push(0, f.make_push(0, 0, 0, filled(parameter_count, 1.0f)));
  REQUIRE(f.take(0).params);
  REQUIRE(f.take(1).params);
  CHECK(answer() == uint64_t{1}); // the round closed: round 1 is next
  waiter->send(f.store, await_atom::value, uint64_t{0});
  f.sched.run();
  CHECK(answer() == uint64_t{1});
  waiter->send(f.store, await_atom::value, uint64_t{1});
  f.sched.run();
  CHECK_FALSE(answer());
}

TEST_CASE("a shard with buffers of its own answers for its current version only",
          "[store][respawn]") {
  store_fixture f("sync", 1, respawning);
  watch_pusher(f, 0);
  f.push(0, f.make_push(0, 0, 0, filled(parameter_count, 1.0f)));
  REQUIRE(f.take(0).params);
  auto& self = f.pusher(0);
  self->send(f.store, params_atom::value, uint64_t{1});
  f.sched.run();
  auto now = f.take(0);
  REQUIRE(now.params);
  CHECK(now.params->version == 1);
  self->send(f.store, params_atom::value, uint64_t{0});
  f.sched.run();
  auto before = f.take(0);
  REQUIRE(before.error);
  CHECK(describe(*before.error).find("holds version 1, not 0") != std::string::npos);
}

TEST_CASE("a shard stepping shared buffers still answers for the version before until "
          "its next step",
          "[store][respawn]") {
  store_fixture f("sync", 1, respawning, {}, shared_parameter_buffers::holding(initial_parameters()));
  watch_pusher(f, 0);
  f.push(0, f.make_push(0, 0, 0, filled(parameter_count, 1.0f)));
  REQUIRE(f.take(0).params);
  auto& self = f.pusher(0);
  self->send(f.store, params_atom::value, uint64_t{0});
  f.sched.run();
  auto before = f.take(0);
  REQUIRE(before.params);
  CHECK(before.params->version == 0);
  CHECK(before.params->round == 0);
  check_values(*before.params, initial_parameters());
  f.push(0, f.make_push(0, 1, 1, filled(parameter_count, 1.0f)));
  REQUIRE(f.take(0).params);
  self->send(f.store, params_atom::value, uint64_t{0}); // two steps back: gone
  f.sched.run();
  REQUIRE(f.take(0).error);
}

TEST_CASE("under async a shard tells a respawned replica where it goes on, and answers a "
          "push it took already without applying it again",
          "[store][respawn][async]") {
  store_fixture f("async", 2, respawning);
  CHECK(watch_pusher(f, 0) == 0);
  CHECK(watch_pusher(f, 1) == 0);
  for (uint64_t round : {7u, 8u}) { // rounds as replicas name them: the epoch's first is 7
    f.push(1, f.make_push(1, round, round - 7, filled(parameter_count, 1.0f)));
    REQUIRE(f.take(1).params);
  }
  // Replica 1's dead actor pushed rounds 7 and 8 here: a new one goes on at 9.
  CHECK(watch_pusher(f, 1) == 9);
  CHECK(watch_pusher(f, 0) == 0); // replica 0 pushed nothing yet
  // The new actor repeats round 8 (another shard missed it): answered at the
  // current version, its gradient unused and its samples not counted.
  f.push(1, f.make_push(1, 8, 2, filled(parameter_count, 100.0f)));
  auto repeat = f.take(1);
  REQUIRE(repeat.params);
  CHECK(repeat.params->version == 2);
  auto stats = f.stats();
  CHECK(stats.version == 2);
  CHECK(stats.samples == 16);
  CHECK(stats.pushes == 2);
  check_values(f.current_params(), shifted(2.0f));
  // Its next round is applied as any push.
  f.push(1, f.make_push(1, 9, 2, filled(parameter_count, 1.0f)));
  REQUIRE(f.take(1).params);
  CHECK(f.stats().version == 3);
  CHECK(f.stats().samples == 24);
}

TEST_CASE("under async a shard refuses a round pushed twice by a replica never replaced",
          "[store][respawn][async]") {
  store_fixture f("async", 1, respawning);
  watch_pusher(f, 0);
  f.push(0, f.make_push(0, 3, 0, filled(parameter_count, 1.0f)));
  REQUIRE(f.take(0).params);
  f.push(0, f.make_push(0, 3, 1, filled(parameter_count, 1.0f)));
  auto twice = f.take(0);
  REQUIRE(twice.error);
  CHECK(twice.error->code() == static_cast<uint8_t>(troupe_errc::duplicate_push));
  CHECK(describe(*twice.error).find("replica 0 pushed round 3 again") != std::string::npos);
  CHECK(f.stats().version == 1);
}

TEST_CASE("under delayed a respawned replica's repeat of a round still pending on a shard "
          "leaves the dead actor's push in it, used once",
          "[store][respawn][delayed]") {
  store_fixture f("delayed", 2, [](store_config& o) {
    respawning(o);
    o.policy.settings.staleness = 2;
  });
  watch_pusher(f, 0);
  watch_pusher(f, 1);
  // Replica 1's actor pushes round 0 and dies; round 0 waits for replica 0.
  f.push(1, f.make_push(1, 0, 0, filled(parameter_count, 1.0f)));
  REQUIRE(f.take(1).params);
  CHECK(watch_pusher(f, 1) == 1);
  f.push(1, f.make_push(1, 0, 0, filled(parameter_count, 100.0f)));
  REQUIRE(f.take(1).params);
  f.push(0, f.make_push(0, 0, 0, filled(parameter_count, 3.0f)));
  REQUIRE(f.take(0).params);
  // Round 0 closed on the dead actor's gradient and replica 0's: mean 2.
  CHECK(f.stats().version == 1);
  CHECK(f.stats().samples == 16);
  check_values(f.current_params(), shifted(2.0f));
}
