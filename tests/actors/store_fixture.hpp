// What the variable store's tests share: an actor system on CAF's
// deterministic scheduler, a store, and replicas that are scoped actors
// pushing with plain sends; the store's answers land in their mailboxes once
// a test runs the scheduler. Needs Catch2.
#pragma once

#include <catch2/catch.hpp>

#include <chrono>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "actors/store/checkpoint_writer.hpp"
#include "actors/store/variable_store.hpp"
#include "messages/errors.hpp"
#include "messages/register.hpp"
#include "tests/actors/test_system.hpp"

namespace troupe::testing {

inline constexpr size_t parameter_count = 6;

// The answer to one push: parameters or an error; neither if none came.
struct reply {
  std::optional<params_msg> params;
  std::optional<caf::error> error;
  bool empty() const { return !params && !error; }
};

// Stands in for a replica in watch_atom; it never trains.
inline replica_actor::behavior_type dummy_replica() {
  return {
    [](epoch_atom, const epoch_order&) { return replica_report{}; },
    [](ready_atom) { return uint32_t{0}; },
    [](residual_atom, uint64_t) { return shared_floats{}; },
    [](residual_atom) { return std::make_tuple(uint64_t{0}, shared_floats{}, shared_floats{}); },
    [](tick_atom) {},
  };
}

inline std::vector<float> initial_parameters() {
  std::vector<float> values(parameter_count);
  for (size_t i = 0; i < parameter_count; ++i)
    values[i] = 0.5f * static_cast<float>(i) - 1.0f;
  return values;
}

inline shared_floats filled(size_t count, float value) {
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
    options.policy.name = mode;
    options.optimizer.name = "sgd";
    options.optimizer.learning_rate = 1.0f; // params -= mean gradient
    options.initial_parameters = shared_floats{initial_parameters()};
    if (adjust)
      adjust(options);
    if (!checkpoint_path.empty())
      writer = spawn_checkpoint_writer(
        sys, checkpoint_target{checkpoint_path, "784-10", {}, "sgd", parameter_count, 1});
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

  // Registers replica i with the store, as the coordinator does, and
  // returns the store's answer: the round replica i pushes next.
  uint64_t watch(uint32_t i) {
    pusher(i)->send(store, watch_atom::value, i, dummies.at(i), uint64_t{0});
    sched.run();
    std::optional<uint64_t> next;
    pusher(i)->receive([&](uint64_t n) { next = n; },
                       caf::after(std::chrono::seconds(0)) >> [] {});
    REQUIRE(next);
    return *next;
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

  store_stats stats() { return stats_of<store_stats>(store); }

  checkpoint_stats writer_stats() { return stats_of<checkpoint_stats>(writer); }

  // Asks `actor` for its stats (stats_atom) and returns the answer.
  template <class Stats, class Handle>
  Stats stats_of(const Handle& actor) {
    auto& self = pusher(0);
    self->send(actor, stats_atom::value);
    sched.run();
    std::optional<Stats> result;
    self->receive([&](Stats& s) { result = std::move(s); },
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

inline void check_values(const params_msg& msg, const std::vector<float>& expected) {
  REQUIRE(msg.values.size() == expected.size());
  for (size_t i = 0; i < expected.size(); ++i)
    CHECK(msg.values.data()[i] == Approx(expected[i]).margin(1e-6));
}

inline std::vector<float> shifted(float by) {
  auto values = initial_parameters();
  for (auto& v : values)
    v -= by;
  return values;
}

inline void check_troupe_error(const reply& r, troupe_errc code) {
  REQUIRE(r.error);
  CHECK_FALSE(r.params);
  CHECK(r.error->category() == caf::atom("troupe"));
  CHECK(r.error->code() == static_cast<uint8_t>(code));
  CHECK(*r.error == code); // through troupe::make_error, found by ADL
  CHECK(describe(*r.error).find("replica") != std::string::npos);
}

} // namespace troupe::testing
