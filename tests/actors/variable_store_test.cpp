// The variable store actor under CAF's deterministic scheduler: closed-form
// sync and async steps, who is answered when, refused pushes, staleness.
// Replicas are scoped actors that push with plain sends; the store's answers
// land in their mailboxes once the test runs the scheduler.
#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <vector>

#include <caf/all.hpp>

#include <unistd.h>

#include "actors/checkpoint_writer.hpp"
#include "actors/variable_store.hpp"
#include "messages/errors.hpp"
#include "messages/register.hpp"
#include "model/checkpoint.hpp"

using namespace troupe;

namespace {

constexpr size_t parameter_count = 6;

struct test_config : caf::actor_system_config {
  test_config() {
    set("scheduler.policy", caf::atom("testing"));
    register_messages(*this);
  }
};

// The answer to one push: parameters or an error; neither if none came.
struct reply {
  std::optional<params_msg> params;
  std::optional<caf::error> error;
  bool empty() const { return !params && !error; }
};

// Stands in for a replica in watch_atom; it never trains.
replica_actor::behavior_type dummy_replica() {
  return {
    [](epoch_atom, const epoch_order&) { return replica_report{}; },
    [](ready_atom) { return uint32_t{0}; },
    [](tick_atom) {},
  };
}

std::vector<float> initial_parameters() {
  std::vector<float> values(parameter_count);
  for (size_t i = 0; i < parameter_count; ++i)
    values[i] = 0.5f * static_cast<float>(i) - 1.0f;
  return values;
}

shared_floats filled(size_t count, float value) {
  return shared_floats{std::make_shared<const std::vector<float>>(count, value)};
}

// One actor system on the test scheduler, a store, and N pushing "replicas".
// With `checkpoint_path` set, a checkpoint writer takes the store's parts.
struct store_fixture {
  explicit store_fixture(const std::string& mode, uint32_t replicas,
                         const std::function<void(store_config&)>& adjust = {},
                         const std::string& checkpoint_path = {},
                         shared_parameter_buffers shared = {})
    : sys(cfg), sched(dynamic_cast<caf::scheduler::test_coordinator&>(sys.scheduler())) {
    store_config options;
    options.mode = mode;
    options.optimizer.name = "sgd";
    options.optimizer.learning_rate = 1.0f; // params -= mean gradient
    options.initial_parameters = shared_floats{initial_parameters()};
    if (adjust)
      adjust(options);
    if (!checkpoint_path.empty())
      writer = spawn_checkpoint_writer(
        sys, checkpoint_target{checkpoint_path, "784-10", 0, "sgd", parameter_count, 1});
    auto spawned = spawn_variable_store(sys, std::move(options), writer, std::move(shared));
    REQUIRE(spawned);
    store = *spawned;
    for (uint32_t i = 0; i < replicas; ++i) {
      pushers.push_back(std::make_unique<caf::scoped_actor>(sys));
      dummies.push_back(sys.spawn(dummy_replica));
    }
    sched.run();
  }

  ~store_fixture() {
    caf::anon_send_exit(store, caf::exit_reason::user_shutdown);
    if (writer)
      caf::anon_send_exit(writer, caf::exit_reason::user_shutdown);
    for (auto& dummy : dummies)
      caf::anon_send_exit(dummy, caf::exit_reason::user_shutdown);
    sched.run();
  }

  caf::scoped_actor& pusher(uint32_t i) { return *pushers.at(i); }

  // Registers replica i with the store, as the coordinator does.
  void watch(uint32_t i) {
    pusher(i)->send(store, watch_atom::value, i, dummies.at(i));
    sched.run();
    std::optional<uint32_t> count;
    pusher(i)->receive([&](uint32_t n) { count = n; },
                       caf::after(std::chrono::seconds(0)) >> [] {});
    REQUIRE(count);
  }

  void push(uint32_t i, push_msg msg) {
    pusher(i)->send(store, push_atom::value, std::move(msg));
    sched.run();
  }

  push_msg make_push(uint32_t replica, uint64_t round, uint64_t base_version,
                     shared_floats gradient, uint32_t batch_size = 8) {
    push_msg msg;
    msg.replica = replica;
    msg.round = round;
    msg.base_version = base_version;
    msg.batch_size = batch_size;
    msg.gradient = std::move(gradient);
    return msg;
  }

  // Takes what is waiting in pusher i's mailbox, without waiting for more.
  reply take(uint32_t i) {
    reply r;
    pusher(i)->receive([&](params_msg& msg) { r.params = std::move(msg); },
                       [&](caf::error& err) { r.error = std::move(err); },
                       caf::after(std::chrono::seconds(0)) >> [] {});
    return r;
  }

  params_msg current_params() {
    auto& self = pusher(0);
    self->send(store, params_atom::value);
    sched.run();
    auto r = take(0);
    REQUIRE(r.params);
    return *r.params;
  }

  // Asks for the checkpoint of a complete epoch, as the coordinator does: the
  // store's part, then the writer's file of it.
  void save() {
    auto& self = pusher(0);
    self->send(store, save_atom::value);
    sched.run();
    std::optional<checkpoint_part> part;
    self->receive([&](checkpoint_part& p) { part = std::move(p); },
                  caf::after(std::chrono::seconds(0)) >> [] {});
    REQUIRE(part);
    CHECK(part->epoch_complete);
    self->send(writer, save_atom::value, std::vector<checkpoint_part>{*part});
    sched.run();
    std::optional<uint64_t> bytes;
    self->receive([&](uint64_t n) { bytes = n; },
                  caf::after(std::chrono::seconds(0)) >> [] {});
    REQUIRE(bytes);
  }

  store_stats stats() {
    auto& self = pusher(0);
    self->send(store, stats_atom::value);
    sched.run();
    std::optional<store_stats> result;
    self->receive([&](store_stats& s) { result = s; },
                  caf::after(std::chrono::seconds(0)) >> [] {});
    REQUIRE(result);
    return *result;
  }

  checkpoint_stats writer_stats() {
    auto& self = pusher(0);
    self->send(writer, stats_atom::value);
    sched.run();
    std::optional<checkpoint_stats> result;
    self->receive([&](checkpoint_stats& s) { result = s; },
                  caf::after(std::chrono::seconds(0)) >> [] {});
    REQUIRE(result);
    return *result;
  }

  test_config cfg;
  caf::actor_system sys;
  caf::scheduler::test_coordinator& sched;
  checkpoint_writer_actor writer;
  store_actor store;
  std::vector<replica_actor> dummies;
  std::vector<std::unique_ptr<caf::scoped_actor>> pushers;
};

void check_values(const params_msg& msg, const std::vector<float>& expected) {
  REQUIRE(msg.values.size() == expected.size());
  for (size_t i = 0; i < expected.size(); ++i)
    CHECK(msg.values.data()[i] == Approx(expected[i]).margin(1e-6));
}

std::vector<float> shifted(float by) {
  auto values = initial_parameters();
  for (auto& v : values)
    v -= by;
  return values;
}

bool same_bytes(const shared_floats& a, const shared_floats& b) {
  return a.size() == b.size()
         && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

void check_troupe_error(const reply& r, troupe_errc code) {
  REQUIRE(r.error);
  CHECK_FALSE(r.params);
  CHECK(r.error->category() == caf::atom("troupe"));
  CHECK(r.error->code() == static_cast<uint8_t>(code));
  CHECK(*r.error == code); // through troupe::make_error, found by ADL
  CHECK(describe(*r.error).find("replica") != std::string::npos);
}

} // namespace

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
  bad_mode.mode = "bogus";
  bad_mode.initial_parameters = shared_floats{initial_parameters()};
  auto a = spawn_variable_store(sys, bad_mode);
  REQUIRE_FALSE(a);
  CHECK(describe(a.error()).find("bogus") != std::string::npos);

  store_config bad_optimizer;
  bad_optimizer.optimizer.name = "rmsprop";
  bad_optimizer.initial_parameters = shared_floats{initial_parameters()};
  auto b = spawn_variable_store(sys, bad_optimizer);
  REQUIRE_FALSE(b);
  CHECK(describe(b.error()).find("rmsprop") != std::string::npos);

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
  options.mode = "sync";
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

TEST_CASE("in an aborting run a replica's death stops the store: no round closes without it",
          "[store][sync][failure]") {
  store_fixture f("sync", 3, [](store_config& o) { o.abort_on_replica_loss = true; });
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

namespace {

// A checkpoint file under the system temp dir, removed afterwards.
struct temp_checkpoint {
  std::string path = (std::filesystem::temp_directory_path()
                      / ("troupe_store_test_" + std::to_string(::getpid()) + "_"
                         + std::to_string(counter++) + ".ckpt"))
                       .string();
  ~temp_checkpoint() { std::filesystem::remove(path); }
  bool exists() const { return std::filesystem::exists(path); }
  checkpoint read() const {
    auto c = read_checkpoint(path);
    REQUIRE(c);
    std::filesystem::remove(path); // the next write is seen as new
    return *c;
  }
  static inline int counter = 0;
};

} // namespace

TEST_CASE("a sync store checkpoints every N closed rounds, mid-epoch, and once asked at an "
          "epoch's end with the flag set",
          "[store][sync][checkpoint]") {
  temp_checkpoint file;
  store_fixture f("sync", 2, [&](store_config& o) { o.checkpoint_every = 2; }, file.path);
  f.watch(0);
  f.watch(1);
  f.pusher(0)->send(f.store, epoch_atom::value, uint64_t{0}, uint64_t{0});
  auto round = [&](uint64_t r, uint64_t version) {
    f.push(0, f.make_push(0, r, version, filled(parameter_count, 1.0f)));
    f.push(1, f.make_push(1, r, version, filled(parameter_count, 1.0f)));
    REQUIRE(f.take(0).params);
    REQUIRE(f.take(1).params);
  };
  round(0, 0);
  CHECK_FALSE(file.exists()); // one closed round of two
  round(1, 1);
  REQUIRE(file.exists());
  auto periodic = file.read();
  CHECK(periodic.round == 2);
  CHECK(periodic.epoch_round == 2);
  CHECK(periodic.version == 2);
  CHECK_FALSE(periodic.epoch_complete);

  // A refused push closes no round; a round closed by a loss counts.
  f.push(0, f.make_push(0, 1, 2, filled(parameter_count, 1.0f)));
  check_troupe_error(f.take(0), troupe_errc::stale_round);
  f.push(0, f.make_push(0, 2, 2, filled(parameter_count, 1.0f)));
  caf::anon_send_exit(f.dummies[1], caf::exit_reason::user_shutdown);
  f.sched.run();
  REQUIRE(f.take(0).params);
  CHECK_FALSE(file.exists());
  f.push(0, f.make_push(0, 3, 3, filled(parameter_count, 1.0f)));
  REQUIRE(f.take(0).params);
  REQUIRE(file.exists());
  CHECK(file.read().round == 4);

  f.save();
  REQUIRE(file.exists());
  auto at_end = file.read();
  CHECK(at_end.epoch_complete);
  CHECK(at_end.round == 4);
  CHECK(at_end.epoch == 0);
}

TEST_CASE("an async store closes no rounds: it checkpoints only when asked",
          "[store][async][checkpoint]") {
  temp_checkpoint file;
  store_fixture f("async", 2, [&](store_config& o) { o.checkpoint_every = 1; }, file.path);
  f.watch(0);
  f.watch(1);
  for (uint64_t i = 0; i < 4; ++i) {
    f.push(i % 2, f.make_push(static_cast<uint32_t>(i % 2), i, i, filled(parameter_count, 1.0f)));
    REQUIRE(f.take(i % 2).params);
  }
  CHECK_FALSE(file.exists());
  CHECK(f.stats().staleness_reported);
  f.save();
  auto at_end = file.read();
  CHECK(at_end.epoch_complete);
  CHECK(at_end.version == 4);
}

TEST_CASE("a periodic checkpoint that cannot be written is counted in the writer's stats, "
          "and "
          "training goes on",
          "[store][sync][checkpoint]") {
  const std::string path = "/nonexistent-troupe-dir/run.ckpt";
  store_fixture f("sync", 1, [&](store_config& o) { o.checkpoint_every = 1; }, path);
  f.watch(0);
  f.pusher(0)->send(f.store, epoch_atom::value, uint64_t{0}, uint64_t{0});
  for (uint64_t r = 0; r < 2; ++r) {
    f.push(0, f.make_push(0, r, r, filled(parameter_count, 1.0f)));
    REQUIRE(f.take(0).params); // the round was answered all the same
  }
  const auto written = f.writer_stats();
  CHECK(written.failed == 2);
  CHECK(written.written == 0);
  CHECK(written.last_error.find(path) != std::string::npos);
  CHECK(f.stats().version == 2);
}
