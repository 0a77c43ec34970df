// A store shard with respawns (--on-replica-loss=respawn): it takes pushes
// only from the actor it watches as each replica, so a replaced actor heard
// from again is refused and counted; and it answers for the version before
// only while it still holds it.
#include "tests/actors/store_fixture.hpp"

using namespace troupe;
using namespace troupe::testing;

namespace {

void respawning(store_config& o) { o.on_replica_loss = replica_loss_action::respawn; }

// Registers pusher i itself as replica i, so its pushes come from the
// watched actor.
void watch_pusher(store_fixture& f, uint32_t i) {
  auto self = caf::actor_cast<replica_actor>(caf::actor_cast<caf::strong_actor_ptr>(f.pusher(i)));
  f.pusher(i)->send(f.store, watch_atom::value, i, self);
  f.sched.run();
  f.pusher(i)->receive([](uint32_t) {}, caf::after(std::chrono::seconds(0)) >> [] {});
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
  CHECK(fenced.error->code() == static_cast<uint8_t>(troupe_errc::unknown_replica));
  CHECK(describe(*fenced.error).find("no longer, that replica") != std::string::npos);
  // Nor may an actor push as a replica it is not.
  f.push(0, f.make_push(1, 1, 1, filled(parameter_count, 5.0f)));
  REQUIRE(f.take(0).error);
  const auto stats = f.stats();
  CHECK(stats.fenced == 2);
  CHECK(stats.version == 1); // round 1 still waits for replica 1's new actor
  check_values(f.current_params(), shifted(1.0f));
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
