// A real replica against a real store: what the replica answers its epoch
// order with when the store refuses its push, or never answers it.
#include <catch2/catch.hpp>

#include <chrono>
#include <memory>
#include <string>

#include <caf/all.hpp>

#include "actors/replica/replica.hpp"
#include "actors/store/variable_store.hpp"
#include "messages/errors.hpp"
#include "messages/register.hpp"
#include "model/parameter_layout.hpp"
#include "tests/test_slice.hpp"

using namespace troupe;

namespace {

struct replica_test_config : caf::actor_system_config {
  replica_test_config() { register_messages(*this); }
};

constexpr const char* small_model = "784-8relu-10";

std::vector<float> model_parameters() {
  return glorot_uniform_parameters(parameter_layout(*parse_model_spec(small_model)), 3);
}

// Spawns a sync store over `store_parameters` and one replica of two that the
// store was never told about (no watch_atom), orders one epoch, and returns
// the replica's answer: a report or the error.
// A sync SGD store over `parameters`.
store_actor spawn_sgd_store(caf::actor_system& sys, std::vector<float> parameters) {
  store_config options;
  options.optimizer.name = "sgd";
  options.optimizer.learning_rate = 0.1f;
  options.initial_parameters = shared_floats{std::move(parameters)};
  auto store = spawn_variable_store(sys, std::move(options));
  REQUIRE(store);
  return *store;
}

// Replica 0 of two of the small model, pushing to `store`.
replica_actor spawn_first_of_two(caf::actor_system& sys, store_actor store,
                                 uint32_t step_timeout_ms) {
  replica_config config;
  config.replicas = 2;
  config.model = small_model;
  config.global_batch = 8;
  config.step_timeout_ms = step_timeout_ms;
  auto replica = spawn_replica(sys, config, {store}, in_memory(shared_train_slice()));
  REQUIRE(replica);
  return *replica;
}

epoch_order first_epoch() {
  epoch_order order;
  order.params.values =
    shared_floats{std::make_shared<const std::vector<float>>(model_parameters())};
  return order;
}

caf::expected<replica_report> epoch_against(std::vector<float> store_parameters) {
  replica_test_config cfg;
  caf::actor_system sys{cfg};
  auto store = spawn_sgd_store(sys, std::move(store_parameters));
  auto replica = spawn_first_of_two(sys, store, 5000);
  auto order = first_epoch();
  caf::expected<replica_report> answer = caf::sec::request_timeout;
  caf::scoped_actor self{sys};
  self->request(replica, std::chrono::seconds(20), epoch_atom::value, order)
    .receive([&](replica_report& report) { answer = report; },
             [&](caf::error& err) { answer = std::move(err); });
  self->send_exit(replica, caf::exit_reason::user_shutdown);
  self->send_exit(store, caf::exit_reason::user_shutdown);
  return answer;
}

} // namespace

TEST_CASE("a store's refusal reaches the replica's answer with its own code",
          "[replica][errors]") {
  SECTION("a replica the sync store does not know: unknown_replica") {
    auto answer = epoch_against(model_parameters());
    REQUIRE_FALSE(answer);
    const auto text = describe(answer.error());
    INFO(text);
    CHECK(answer.error().category() == caf::atom("troupe"));
    CHECK(answer.error().code() == static_cast<uint8_t>(troupe_errc::unknown_replica));
    CHECK(text.find("replica 0: push of round 0 failed") != std::string::npos);
    CHECK(text.find("not a live member") != std::string::npos);
  }
  SECTION("a gradient of the wrong size: bad_gradient") {
    auto answer = epoch_against(std::vector<float>(5, 0.0f));
    REQUIRE_FALSE(answer);
    const auto text = describe(answer.error());
    INFO(text);
    CHECK(answer.error().category() == caf::atom("troupe"));
    CHECK(answer.error().code() == static_cast<uint8_t>(troupe_errc::bad_gradient));
    CHECK(text.find("expected 5") != std::string::npos);
  }
}

TEST_CASE("a replica trains on an epoch order of its own membership epoch only, and its "
          "report names that epoch",
          "[replica][fencing]") {
  replica_test_config cfg;
  caf::actor_system sys{cfg};
  auto store = spawn_sgd_store(sys, model_parameters());
  replica_config config;
  config.model = small_model;
  config.global_batch = 8;
  config.membership = 3;
  auto replica = spawn_replica(sys, config, {store}, in_memory(shared_train_slice()));
  REQUIRE(replica);
  caf::scoped_actor self{sys};
  self->request(store, std::chrono::seconds(5), watch_atom::value, uint32_t{0}, *replica,
                uint64_t{3})
    .receive([](uint64_t) {}, [](caf::error& err) { FAIL(describe(err)); });
  auto order_with = [&](uint64_t membership) {
    auto order = first_epoch();
    order.membership = membership;
    caf::expected<replica_report> answer = caf::sec::request_timeout;
    self->request(*replica, std::chrono::seconds(20), epoch_atom::value, order)
      .receive([&](replica_report& report) { answer = report; },
               [&](caf::error& err) { answer = std::move(err); });
    return answer;
  };
  auto pushes = [&] {
    uint64_t count = UINT64_MAX;
    self->request(store, std::chrono::seconds(5), stats_atom::value)
      .receive([&](store_stats& stats) { count = stats.pushes; },
               [](caf::error& err) { FAIL(describe(err)); });
    return count;
  };
  auto refused = order_with(2);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code() == static_cast<uint8_t>(troupe_errc::fenced));
  CHECK(describe(refused.error())
        == "replica 0 of membership epoch 3 refuses an epoch order for epoch 2");
  CHECK(pushes() == 0);
  auto trained = order_with(3);
  REQUIRE(trained);
  CHECK(trained->membership == 3);
  CHECK(trained->samples == static_cast<uint64_t>(shared_train_slice()->count));
  CHECK(pushes() == trained->pushes);
  self->send_exit(*replica, caf::exit_reason::user_shutdown);
  self->send_exit(store, caf::exit_reason::user_shutdown);
}

TEST_CASE("a push the store never answers fails after the step timeout, not never",
          "[replica][errors][timeout]") {
  // A sync round of two replicas where the second never pushes: the store
  // holds the first one's push open. Its watchdog must end the epoch.
  replica_test_config cfg;
  caf::actor_system sys{cfg};
  auto store = spawn_sgd_store(sys, model_parameters());
  auto replica = spawn_first_of_two(sys, store, 400);
  auto silent = sys.spawn([]() -> replica_actor::behavior_type {
    return {
      [](epoch_atom, const epoch_order&) { return replica_report{}; },
      [](ready_atom) { return uint32_t{1}; },
      [](residual_atom, uint64_t) { return shared_floats{}; },
    [](residual_atom) { return std::make_tuple(uint64_t{0}, shared_floats{}, shared_floats{}); },
      [](tick_atom) {},
    };
  });
  caf::scoped_actor self{sys};
  for (uint32_t index : {0u, 1u})
    self->request(store, std::chrono::seconds(5), watch_atom::value, index,
                  index == 0 ? replica : silent, uint64_t{0})
      .receive([](uint64_t) {}, [](caf::error& err) { FAIL(describe(err)); });
  caf::expected<replica_report> answer = caf::sec::request_timeout;
  const auto start = std::chrono::steady_clock::now();
  self->request(replica, std::chrono::seconds(20), epoch_atom::value, first_epoch())
    .receive([&](replica_report& report) { answer = report; },
             [&](caf::error& err) { answer = std::move(err); });
  const auto waited = std::chrono::steady_clock::now() - start;
  for (const caf::actor& actor : {caf::actor_cast<caf::actor>(replica),
                                  caf::actor_cast<caf::actor>(silent),
                                  caf::actor_cast<caf::actor>(store)})
    self->send_exit(actor, caf::exit_reason::user_shutdown);
  REQUIRE_FALSE(answer);
  const auto text = describe(answer.error());
  INFO(text);
  CHECK(answer.error().code() == static_cast<uint8_t>(troupe_errc::timeout));
  CHECK(text.find("replica 0: push of round 0 failed: no answer from the store within 400 ms")
        != std::string::npos);
  CHECK(waited >= std::chrono::milliseconds(400));
  CHECK(waited < std::chrono::seconds(10)); // a bound, not a speed: 1.25 timeouts expected
}

TEST_CASE("a push whose shard is gone fails naming the shard, as the store's loss",
          "[replica][errors]") {
  // A shard that answers every push as CAF answers a request to an actor
  // that is gone, while the replica's monitor of it has not fired.
  replica_test_config cfg;
  caf::actor_system sys{cfg};
  auto gone = caf::actor_cast<store_actor>(sys.spawn([](caf::event_based_actor*) {
    return caf::behavior{[](push_atom, push_msg&) -> caf::result<params_msg> {
      return caf::make_error(caf::sec::request_receiver_down);
    }};
  }));
  auto replica = spawn_first_of_two(sys, gone, 5000);
  caf::expected<replica_report> answer = caf::sec::request_timeout;
  caf::scoped_actor self{sys};
  self->request(replica, std::chrono::seconds(20), epoch_atom::value, first_epoch())
    .receive([&](replica_report& report) { answer = report; },
             [&](caf::error& err) { answer = std::move(err); });
  for (const caf::actor& actor : {caf::actor_cast<caf::actor>(replica),
                                  caf::actor_cast<caf::actor>(gone)})
    self->send_exit(actor, caf::exit_reason::user_shutdown);
  REQUIRE_FALSE(answer);
  const auto text = describe(answer.error());
  INFO(text);
  CHECK(answer.error().code() == static_cast<uint8_t>(troupe_errc::store_lost));
  CHECK(text.find("replica 0: push of round 0 failed: store shard 0 of 1 is gone")
        != std::string::npos);
}
