// Clipping by global norm in the store: the gate's order of steps and calls,
// and sync shards that exchange their sums of squares, with the same bits
// for 1, 2 and 3 shards.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#include <caf/all.hpp>

#include "actors/store/clip_gate.hpp"
#include "model/shard_layout.hpp"
#include "tests/actors/store_fixture.hpp"

using namespace troupe;
using namespace troupe::testing;

TEST_CASE("a clip gate holds a round's step and the calls after it until every shard's sum "
          "is in, and every shard gets the norm of the whole gradient",
          "[store][clipnorm]") {
  // g = (3 x 16 floats, 4 x 16 floats): norm sqrt(16 x 25) = 20, clipped at 2.
  const std::vector<float> left(16, 3.0f), right(16, 4.0f);
  std::vector<std::vector<float>> stepped(2);
  std::vector<int> order;
  clip_gate first(0, 2, 2.0f), second(1, 2, 2.0f);
  const auto left_sum = sum_of_squares(left.data(), left.size());
  const auto right_sum = sum_of_squares(right.data(), right.size());
  first.step(7, left, left_sum,
             [&](float* g) { stepped[0].assign(g, g + 16), order.push_back(1); });
  CHECK(first.busy());
  first.in_order([&] { order.push_back(2); });
  CHECK(order.empty());
  CHECK_FALSE(first.heard(7, 0, right_sum)); // its own index: not a sibling's
  CHECK(first.heard(7, 1, right_sum));
  CHECK_FALSE(first.busy());
  CHECK(order == std::vector<int>{1, 2});
  // The sibling's sum may come before its own step.
  CHECK(second.heard(7, 0, left_sum));
  second.step(7, right, right_sum, [&](float* g) { stepped[1].assign(g, g + 16); });
  CHECK_FALSE(second.busy());
  CHECK(first.last_norm() == 20.0);
  CHECK(second.last_norm() == 20.0);
  CHECK(stepped[0] == std::vector<float>(16, 0.3f));
  CHECK(stepped[1] == std::vector<float>(16, 0.4f));
  // One shard: no sibling to wait for.
  clip_gate alone(0, 1, 100.0f);
  bool ran = false;
  alone.step(0, left, left_sum, [&](float* g) { ran = g[0] == 3.0f; });
  CHECK(ran);
}

namespace {

constexpr size_t clip_parameters = 100;

// `shards` sync shards of 100 parameters with sgd at lr 0.5 and `clipnorm`,
// told their siblings, and 2 replicas watched by each, on the test scheduler.
struct clip_shards {
  clip_shards(uint32_t shards, float clipnorm,
              replica_loss_action on_loss = replica_loss_action::continue_run)
    : sys(cfg), sched(dynamic_cast<caf::scheduler::test_coordinator&>(sys.scheduler())),
      self(sys), ranges(*split_into_shards(clip_parameters, shards)) {
    for (size_t i = 0; i < params.size(); ++i)
      params[i] = std::sin(static_cast<float>(i));
    std::vector<caf::actor> handles;
    for (uint32_t k = 0; k < shards; ++k) {
      store_config options;
      options.policy.name = "sync";
      options.on_replica_loss = on_loss;
      options.optimizer = optimizers::with_global_clipnorm(optimizers::sgd(0.5f), clipnorm);
      options.shard = k;
      options.shards = shards;
      options.parameter_count = clip_parameters;
      options.initial_parameters = shared_floats{slice(params, k)};
      auto spawned = spawn_variable_store(sys, options);
      REQUIRE(spawned);
      store.push_back(*spawned);
      handles.push_back(caf::actor_cast<caf::actor>(*spawned));
    }
    for (auto& shard : store)
      self->send(shard, peers_atom::value, handles);
    for (uint32_t i = 0; i < 2; ++i) {
      dummies.push_back(caf::actor_cast<caf::actor>(sys.spawn(dummy_replica)));
      watch(i, dummies[i], 0);
    }
  }

  // Watches `actor` as replica i of membership epoch `membership` on every
  // shard, and takes the answers.
  void watch(uint32_t i, const caf::actor& actor, uint64_t membership) {
    for (auto& shard : store)
      self->send(shard, watch_atom::value, i, caf::actor_cast<replica_actor>(actor),
                 membership);
    sched.run();
    for (size_t watched = 0; watched < store.size(); ++watched)
      self->receive([](uint64_t) {}, caf::after(std::chrono::seconds(0)) >> [] {
        FAIL("a shard did not answer a watch");
      });
  }

  ~clip_shards() {
    for (auto& shard : store)
      caf::anon_send_exit(shard, caf::exit_reason::user_shutdown);
    for (auto& dummy : dummies)
      caf::anon_send_exit(dummy, caf::exit_reason::user_shutdown);
    sched.run();
  }

  std::vector<float> slice(const std::vector<float>& whole, uint32_t k) const {
    return {whole.begin() + ranges[k].offset,
            whole.begin() + ranges[k].offset + ranges[k].count};
  }

  // Sends replica i's gradient of `round` to shard k (batch sizes 8 and 16),
  // from `from` (the scoped actor when none).
  void push(uint32_t i, uint64_t round, uint32_t k, caf::scoped_actor* from = nullptr,
            uint64_t membership = 0) {
    std::vector<float> g(clip_parameters);
    for (size_t j = 0; j < g.size(); ++j)
      g[j] = std::cos(static_cast<float>(j * (i + 2) + round)) * (1.0f + round);
    push_msg msg;
    msg.replica = i;
    msg.round = round;
    msg.batch_size = 8 + 8 * i;
    msg.gradient = shared_floats{slice(g, k)};
    msg.membership = membership;
    (from != nullptr ? *from : self)->send(store[k], push_atom::value, msg);
  }

  // Takes `count` answers into `params`; false when one is missing.
  bool take_answers(uint32_t count, caf::scoped_actor* to = nullptr) {
    bool all = true;
    for (uint32_t answer = 0; answer < count && all; ++answer)
      (to != nullptr ? *to : self)->receive(
        [&](params_msg& msg) {
          std::copy(msg.values.data(), msg.values.data() + msg.values.size(),
                    params.begin() + msg.offset);
        },
        [](caf::error& err) { FAIL(to_string(err)); },
        caf::after(std::chrono::seconds(0)) >> [&] { all = false; });
    return all;
  }

  test_config cfg;
  caf::actor_system sys;
  caf::scheduler::test_coordinator& sched;
  caf::scoped_actor self;
  std::vector<shard_range> ranges;
  std::vector<store_actor> store;
  std::vector<caf::actor> dummies;
  std::vector<float> params = std::vector<float>(clip_parameters);
};

// Runs 3 sync rounds of 2 replicas on `shards` shards and returns the
// whole parameters at the end.
std::vector<float> sync_rounds(uint32_t shards, float clipnorm) {
  clip_shards run(shards, clipnorm);
  for (uint64_t round = 0; round < 3; ++round) {
    for (uint32_t i = 0; i < 2; ++i)
      for (uint32_t k = 0; k < shards; ++k)
        run.push(i, round, k);
    run.sched.run();
    REQUIRE(run.take_answers(2 * shards));
  }
  return run.params;
}

} // namespace

TEST_CASE("sync shards with global_clipnorm exchange their sums and keep the same bits for "
          "1, 2 and 3 shards",
          "[store][sync][clipnorm][bits]") {
  const auto one = sync_rounds(1, 0.5f);
  const auto two = sync_rounds(2, 0.5f);
  const auto three = sync_rounds(3, 0.5f);
  CHECK(std::memcmp(one.data(), two.data(), one.size() * sizeof(float)) == 0);
  CHECK(std::memcmp(one.data(), three.data(), one.size() * sizeof(float)) == 0);
  // The clip is active: without it the steps differ; far above the norm it
  // leaves the bits of no clipping.
  const auto unclipped = sync_rounds(3, 0.0f);
  CHECK(std::memcmp(one.data(), unclipped.data(), one.size() * sizeof(float)) != 0);
  const auto loose = sync_rounds(2, 1e6f);
  CHECK(std::memcmp(loose.data(), unclipped.data(), one.size() * sizeof(float)) == 0);
}

TEST_CASE("a sync shard that waits for its siblings' sums answers nothing until they are in, "
          "and ends when a sibling it waits for is gone",
          "[store][sync][clipnorm]") {
  clip_shards run(2, 0.5f);
  run.push(0, 0, 0);
  run.push(1, 0, 0);
  run.sched.run(); // shard 0 closed round 0 and waits for shard 1's sum
  caf::scoped_actor asker{run.sys};
  asker->send(run.store[0], stats_atom::value);
  run.sched.run();
  CHECK_FALSE(run.take_answers(1));
  std::optional<store_stats> stats;
  asker->receive([&](store_stats& s) { stats = s; }, caf::after(std::chrono::seconds(0)) >> [] {});
  CHECK_FALSE(stats); // kept in the mailbox while the step waits
  run.push(0, 0, 1);
  run.push(1, 0, 1);
  run.sched.run();
  CHECK(run.take_answers(4));
  asker->receive([&](store_stats& s) { stats = s; }, caf::after(std::chrono::seconds(0)) >> [] {});
  REQUIRE(stats);
  CHECK(stats->version == 1);
  // Round 1 reaches shard 0 only, and shard 1 goes: shard 0 ends, store_lost.
  run.self->monitor(run.store[0]);
  run.push(0, 1, 0);
  run.push(1, 1, 0);
  run.sched.run();
  caf::anon_send_exit(run.store[1], caf::exit_reason::kill);
  run.sched.run();
  std::optional<caf::error> reason;
  run.self->receive([&](caf::down_msg& down) { reason = down.reason; },
                    [](params_msg&) {}, caf::after(std::chrono::seconds(0)) >> [] {});
  REQUIRE(reason);
  CHECK(reason->code() == static_cast<uint8_t>(troupe_errc::store_lost));
  CHECK(describe(*reason).find("sibling shard 1") != std::string::npos);
}

TEST_CASE("a sync shard that waits for its sibling's sum answers a respawn's watch and "
          "parameter questions with the round it waits to step, and the new actor's push "
          "completes the round with the bits of a run where nothing died",
          "[store][sync][clipnorm][respawn]") {
  const auto nothing_died = sync_rounds(2, 0.5f);
  clip_shards run(2, 0.5f, replica_loss_action::respawn);
  caf::scoped_actor r0{run.sys}, r1{run.sys}, r1_new{run.sys};
  run.watch(0, caf::actor_cast<caf::actor>(r0), 0);
  run.watch(1, caf::actor_cast<caf::actor>(r1), 0);
  for (uint64_t round = 0; round < 3; ++round) {
    INFO("round " << round);
    auto& second = round >= 1 ? r1_new : r1;
    const uint64_t membership = round >= 1 ? 1 : 0;
    if (round == 1) {
      // Replica 1 reaches shard 0 only, then dies: shard 0 closes the round
      // and waits for shard 1's sum, which waits for replica 1's slice.
      run.push(0, 1, 0, &r0);
      run.push(0, 1, 1, &r0);
      run.push(1, 1, 0, &r1);
      run.sched.run();
      // The respawn: watch the new actor, ask every shard where it stands.
      run.watch(1, caf::actor_cast<caf::actor>(r1_new), 1);
      for (auto& shard : run.store)
        run.self->send(shard, params_atom::value);
      run.sched.run();
      for (size_t k = 0; k < run.store.size(); ++k)
        run.self->receive(
          [&](params_msg& msg) {
            CHECK(msg.version == 1);
            CHECK(msg.round == 1);
          },
          caf::after(std::chrono::seconds(0)) >> [] { FAIL("a shard did not answer"); });
    } else {
      run.push(0, round, 0, &r0);
      run.push(0, round, 1, &r0);
    }
    run.push(1, round, 0, &second, membership);
    run.push(1, round, 1, &second, membership);
    run.sched.run();
    REQUIRE(run.take_answers(2, &r0));
    REQUIRE(run.take_answers(2, &second));
  }
  CHECK(std::memcmp(run.params.data(), nothing_died.data(), nothing_died.size() * sizeof(float))
        == 0);
}

TEST_CASE("a graceful stop halts a sync shard that waits for its sibling's sum, and every "
          "shard's part comes once the waiting step has run",
          "[store][sync][clipnorm][stop]") {
  clip_shards run(2, 0.5f);
  run.push(0, 0, 0);
  run.push(1, 0, 0);
  run.push(0, 0, 1);
  run.sched.run(); // shard 0 waits for shard 1's sum; shard 1 for replica 1's slice
  caf::scoped_actor coordinator{run.sys};
  std::vector<uint64_t> next_rounds;
  for (auto& shard : run.store)
    coordinator->send(shard, halt_atom::value);
  run.sched.run();
  for (size_t k = 0; k < run.store.size(); ++k)
    coordinator->receive([&](store_stats& s) { next_rounds.push_back(s.next_round); },
                         caf::after(std::chrono::seconds(0)) >> [] { FAIL("no halt answer"); });
  CHECK(next_rounds == std::vector<uint64_t>{1, 0});
  run.push(1, 0, 1); // held: shard 1 halted at round 0
  run.sched.run();
  CHECK_FALSE(run.take_answers(1));
  for (auto& shard : run.store)
    coordinator->send(shard, halt_atom::value, uint64_t{1});
  run.sched.run();
  for (size_t k = 0; k < run.store.size(); ++k)
    coordinator->receive(
      [&](checkpoint_part& part) {
        CHECK(part.round == 1);
        CHECK(part.version == 1);
      },
      [](caf::error& err) { FAIL(to_string(err)); },
      caf::after(std::chrono::seconds(0)) >> [] { FAIL("no part"); });
  CHECK(run.take_answers(4));
}
