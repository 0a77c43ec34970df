// What the update policy tests share: a fake store_port that records every
// step, answer and closed round, and pushes made as the store makes them.
// Needs Catch2.
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "actors/policy/policy_registry.hpp"

namespace troupe::testing {

// Records every step (a copy of the gradient it was given), every answer and
// every closed round, and the order of all three ("step", "answer 7", "closed").
struct fake_store : store_port {
  explicit fake_store(size_t count) : count(count) {}

  void apply_step(const float* gradient, float lr_scale) override {
    steps.emplace_back(gradient, gradient + count);
    lr_scales.push_back(lr_scale);
    events.push_back("step");
  }

  void apply_weighted_step(const std::vector<weighted_gradient>& terms) override {
    std::vector<float> gradient(count);
    weighted_gradient_sum(terms, 0, count, gradient.data());
    steps.push_back(std::move(gradient));
    events.push_back("step");
  }

  void answer_from(uint64_t ticket, uint64_t steps_back) override {
    answer_backs.emplace_back(ticket, steps_back);
    answer(ticket);
  }

  void answer(uint64_t ticket) override {
    answers.push_back(ticket);
    events.push_back("answer " + std::to_string(ticket));
  }

  void refuse_open(troupe_errc code, const std::string& reason) override {
    refusals.emplace_back(code, reason);
    events.push_back("refused open");
  }

  void refuse(uint64_t ticket, troupe_errc code, const std::string& reason) override {
    refused_tickets.push_back(ticket);
    refusals.emplace_back(code, reason);
    events.push_back("refused " + std::to_string(ticket));
  }

  void answer_unused(uint64_t ticket) override {
    unused.push_back(ticket);
    events.push_back("unused " + std::to_string(ticket));
  }

  void round_closed() override {
    ++rounds_closed;
    events.push_back("closed");
  }

  size_t count;
  std::vector<std::vector<float>> steps;
  std::vector<float> lr_scales; // of apply_step
  std::vector<std::pair<uint64_t, uint64_t>> answer_backs; // (ticket, steps back) of answer_from
  std::vector<uint64_t> answers;
  std::vector<std::pair<troupe_errc, std::string>> refusals; // of refuse_open and refuse
  std::vector<uint64_t> refused_tickets;                     // of refuse
  std::vector<uint64_t> unused;                              // of answer_unused
  size_t rounds_closed = 0;
  std::vector<std::string> events;
};

inline std::shared_ptr<const std::vector<float>> filled(size_t count, float value) {
  return std::make_shared<const std::vector<float>>(count, value);
}

inline gradient_push make_push(uint32_t replica, uint64_t round, uint32_t batch_size,
                               std::shared_ptr<const std::vector<float>> gradient,
                               uint64_t ticket, uint64_t staleness = 0) {
  gradient_push push;
  push.replica = replica;
  push.round = round;
  push.batch_size = batch_size;
  if (gradient)
    push.gradient = shared_floats{std::move(gradient)};
  push.ticket = ticket;
  push.staleness = staleness;
  return push;
}

// Pushes as the store does; fails the test on a refusal.
inline void accept(update_policy& policy, gradient_push push, store_port& store) {
  auto refused = policy.on_push(std::move(push), store);
  INFO((refused ? refused->reason : std::string("taken")));
  REQUIRE_FALSE(refused);
}

// Pushes and expects a refusal with `code`; returns its sentence.
inline std::string refuse(update_policy& policy, gradient_push push, store_port& store,
                          troupe_errc code) {
  auto refused = policy.on_push(std::move(push), store);
  REQUIRE(refused);
  CHECK(refused->code == code);
  return refused->reason;
}

// Builds the registered policy `mode` with `settings`; fails the test if it
// cannot.
inline std::unique_ptr<update_policy> build_policy(const std::string& mode,
                                                   policy_settings settings = {}) {
  auto policy = make_update_policy(policy_spec{mode, settings});
  INFO(mode);
  REQUIRE(policy);
  return std::move(*policy);
}

// Settings every registered policy runs with: staleness K where it applies.
inline policy_settings settings_for(const std::string& mode, uint32_t staleness) {
  const auto& applies = find_policy(mode)->settings;
  policy_settings settings;
  if (std::find(applies.begin(), applies.end(), "staleness") != applies.end())
    settings.staleness = staleness;
  return settings;
}

inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

inline bool bitwise_equal(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size()
         && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

} // namespace troupe::testing
