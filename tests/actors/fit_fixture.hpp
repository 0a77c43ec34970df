// What the whole-fit tests share: a small run's options, a fit on a fresh
// actor system over the test slice, its records, and checks of a fit that
// loses a replica. Needs Catch2.
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <mutex>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "actors/run/coordinator.hpp"
#include "messages/errors.hpp"
#include "messages/register.hpp"
#include "tests/actors/failing_backend.hpp"
#include "tests/test_slice.hpp"

namespace troupe::testing {

struct fit_config : caf::actor_system_config {
  fit_config() { register_messages(*this); }
};

// A small, quick run: a narrow model and SGD, whose update is linear in the
// gradient. Adam's normalisation amplifies reduction round-off on small
// gradients past the equivalence test's tolerance; SGD's stays within it.
inline run_config small_options(const std::string& mode, uint32_t replicas, uint32_t batch) {
  run_config options;
  options.policy.name = mode;
  options.replicas = replicas;
  options.epochs = 1;
  options.batch_size = batch;
  options.model = "784-32relu-10";
  options.optimizer.name = "sgd";
  options.optimizer.learning_rate = 0.05f;
  options.seed = 7;
  options.step_timeout_ms = 10000;
  return options;
}

// Collects the epoch records and warnings the observer sees (it runs on the
// coordinator's thread, so the test reads them only after fit returns).
struct record_log {
  std::mutex mutex;
  std::vector<epoch_record> records;
  std::vector<std::string> warnings;
  fit_observer observer() {
    fit_observer heard;
    heard.on_epoch = [this](const epoch_record& record) {
      std::lock_guard<std::mutex> guard(mutex);
      records.push_back(record);
    };
    heard.on_warning = [this](const std::string& text) {
      std::lock_guard<std::mutex> guard(mutex);
      warnings.push_back(text);
    };
    return heard;
  }
};

inline caf::expected<fit_summary> run_fit(const run_config& options,
                                   fit_observer observer = {}) {
  fit_config cfg;
  caf::actor_system sys{cfg};
  return run_training(sys, options, shared_test_slice(), std::move(observer));
}

inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// A sync fit of `replicas` replicas at batch 32 in which replica
// `fail_replica` throws at push 5, bounded by 3 s per push.
inline run_config losing_replica_options(uint32_t replicas, uint32_t fail_replica,
                                  replica_loss_action on_replica_loss) {
  auto options = small_options("sync", replicas, 32);
  options.on_replica_loss = on_replica_loss;
  testing::fail_replica_at_push(options, fail_replica, 5);
  options.step_timeout_ms = 3000;
  return options;
}

// Runs a fit that must fail because a replica was lost; checks the error's
// code, that it names the replica and that it came within 30 s, and returns
// the error for the caller's own checks.
inline caf::error fit_fails_losing_replica(const run_config& options, uint32_t lost_replica) {
  const auto start = std::chrono::steady_clock::now();
  auto summary = run_fit(options);
  const double elapsed = seconds_since(start);
  REQUIRE_FALSE(summary);
  const auto text = describe(summary.error());
  INFO(text);
  CHECK(summary.error().code() == static_cast<uint8_t>(troupe_errc::replica_lost));
  CHECK(text.find("replica " + std::to_string(lost_replica)) != std::string::npos);
  CHECK(elapsed < 30.0);
  return summary.error();
}

// Compares two parameter vectors element-wise: |a - b| <= rtol * max(|a|,|b|) + atol.
// Returns the index of the worst violation ratio, for a message.
struct comparison {
  bool ok = true;
  size_t worst = 0;
  double worst_ratio = 0; // |a - b| / (rtol * max + atol); > 1 fails
};

inline comparison compare_params(const shared_floats& a, const shared_floats& b, double rtol,
                          double atol) {
  comparison result;
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    const double x = a.data()[i];
    const double y = b.data()[i];
    const double bound = rtol * std::max(std::abs(x), std::abs(y)) + atol;
    double ratio = std::abs(x - y) / bound;
    if (std::isnan(ratio))
      ratio = INFINITY;
    if (i == 0 || ratio > result.worst_ratio) {
      result.worst = i;
      result.worst_ratio = ratio;
    }
  }
  result.ok = result.worst_ratio <= 1.0;
  return result;
}

} // namespace troupe::testing
