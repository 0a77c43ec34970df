// The update policies against a fake store_port: no CAF, just the decisions a
// policy makes (when to step, what to sum, whom to answer, what to refuse).
#include <catch2/catch.hpp>

#include <cstring>
#include <map>
#include <memory>
#include <vector>

#include "actors/async_policy.hpp"
#include "actors/sync_policy.hpp"

using namespace troupe;

namespace {

// Records every step (a copy of the gradient it was given) and every answer.
struct fake_store : store_port {
  explicit fake_store(size_t count) : count(count) {}

  void apply_step(const float* gradient) override {
    steps.emplace_back(gradient, gradient + count);
    step_pointers.push_back(gradient);
  }

  void answer(uint64_t ticket) override { answers.push_back(ticket); }

  size_t count;
  std::vector<std::vector<float>> steps;
  std::vector<const float*> step_pointers;
  std::vector<uint64_t> answers;
};

std::shared_ptr<const std::vector<float>> filled(size_t count, float value) {
  return std::make_shared<const std::vector<float>>(count, value);
}

gradient_push make_push(uint32_t replica, uint64_t round, uint32_t batch_size,
                        std::shared_ptr<const std::vector<float>> gradient,
                        uint64_t ticket) {
  gradient_push push;
  push.replica = replica;
  push.round = round;
  push.batch_size = batch_size;
  push.gradient = std::move(gradient);
  push.ticket = ticket;
  return push;
}

// Pushes through check() first, as the store does; fails the test on a refusal.
void accept(update_policy& policy, gradient_push push, store_port& store) {
  REQUIRE(policy.check(push) == push_refusal::none);
  policy.on_push(std::move(push), store);
}

bool bitwise_equal(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size()
         && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

} // namespace

TEST_CASE("the policy factory builds sync and async and refuses other modes",
          "[policy]") {
  auto sync = make_update_policy("sync", 4);
  REQUIRE(sync);
  CHECK((*sync)->name() == "sync");
  auto async = make_update_policy("async", 4);
  REQUIRE(async);
  CHECK((*async)->name() == "async");
  auto bogus = make_update_policy("bogus", 4);
  REQUIRE_FALSE(bogus);
  CHECK(bogus.error().code == model_errc::invalid_argument);
  CHECK(bogus.error().message.find("bogus") != std::string::npos);
}

TEST_CASE("sync answers nobody until every live replica has pushed the round",
          "[policy][sync]") {
  constexpr size_t count = 5;
  sync_policy policy(count);
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
    sync_policy policy(count);
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

TEST_CASE("sync refuses unknown replicas, stale and future rounds and duplicates",
          "[policy][sync]") {
  constexpr size_t count = 2;
  sync_policy policy(count);
  fake_store store(count);
  policy.on_replica_joined(0);
  policy.on_replica_joined(1);

  CHECK(policy.check(make_push(7, 0, 1, filled(count, 1.0f), 0))
        == push_refusal::unknown_replica);
  CHECK(policy.check(make_push(0, 1, 1, filled(count, 1.0f), 0))
        == push_refusal::unexpected_round);

  accept(policy, make_push(0, 0, 1, filled(count, 1.0f), 1), store);
  CHECK(policy.check(make_push(0, 0, 1, filled(count, 1.0f), 2))
        == push_refusal::duplicate_push);
  CHECK(policy.check(make_push(1, 0, 1, filled(count, 1.0f), 3)) == push_refusal::none);
  accept(policy, make_push(1, 0, 1, filled(count, 1.0f), 3), store);
  REQUIRE(policy.next_round() == 1);

  CHECK(policy.check(make_push(0, 0, 1, filled(count, 1.0f), 4))
        == push_refusal::stale_round);
  CHECK(policy.check(make_push(0, 2, 1, filled(count, 1.0f), 4))
        == push_refusal::unexpected_round);
  CHECK(policy.check(make_push(0, 1, 1, filled(count, 1.0f), 4)) == push_refusal::none);
  // Refusals are checks only: nothing was stepped or answered beyond round 0.
  CHECK(store.steps.size() == 1);
  CHECK(store.answers == std::vector<uint64_t>{1, 3});
}

TEST_CASE("sync closes a round over the others when a replica is lost",
          "[policy][sync][failure]") {
  constexpr size_t count = 4;
  sync_policy policy(count);
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

  // The lost replica is unknown from now on, and rounds need only the others.
  CHECK(policy.check(make_push(2, 1, 2, filled(count, 1.0f), 0))
        == push_refusal::unknown_replica);
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
}

TEST_CASE("sync counts a gradient pushed by a replica that is lost later in the round",
          "[policy][sync][failure]") {
  constexpr size_t count = 2;
  sync_policy policy(count);
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
}

TEST_CASE("sync lets a 0-sample push take part without weight", "[policy][sync]") {
  constexpr size_t count = 3;
  sync_policy policy(count);
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
  // Async accepts any replica and any round: staleness, not rounds, is its measure.
  CHECK(policy.check(make_push(9, 123, 1, filled(count, 1.0f), 0)) == push_refusal::none);

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

TEST_CASE("both policies let go of a gradient before they answer its pusher",
          "[policy][sync][async]") {
  constexpr size_t count = 4;
  for (const std::string mode : {"sync", "async"}) {
    INFO(mode);
    auto policy = make_update_policy(mode, count);
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
