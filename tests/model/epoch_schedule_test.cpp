// Tests for the epoch schedule: batch_plan's split with full membership, and
// every sample trained on exactly once however replicas are lost.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <numeric>
#include <utility>
#include <vector>

#include "model/data/batch_plan.hpp"
#include "model/data/epoch_schedule.hpp"
#include "model/random.hpp"

using namespace troupe;

namespace {

struct loss {
  size_t round;
  uint32_t replica;
  bool share_used;
};

std::vector<uint32_t> iota_replicas(uint32_t count) {
  std::vector<uint32_t> result(count);
  std::iota(result.begin(), result.end(), 0u);
  return result;
}

// Applies the losses and counts how often each position is actually trained:
// a replica lost in a round trains its share of that round only if the share
// was used, and nothing afterwards.
std::vector<int> trained_counts(epoch_schedule& schedule, const std::vector<loss>& losses) {
  std::map<std::pair<size_t, uint32_t>, bool> lost_in;
  for (const loss& l : losses) {
    schedule.lose(l.round, l.replica, l.share_used);
    lost_in[{l.round, l.replica}] = l.share_used;
  }
  std::vector<int> counts(schedule.samples(), 0);
  for (size_t round = 0; round < schedule.rounds(); ++round) {
    size_t in_round = 0;
    for (uint32_t replica : schedule.live(round)) {
      auto share = schedule.positions(round, replica);
      in_round += share.size();
      auto it = lost_in.find({round, replica});
      if (it != lost_in.end() && !it->second)
        continue;
      for (uint32_t p : share)
        ++counts.at(p);
    }
    REQUIRE(in_round == schedule.round_size(round));
  }
  return counts;
}

bool each_once(const std::vector<int>& counts) {
  return std::all_of(counts.begin(), counts.end(), [](int n) { return n == 1; });
}

bool is_live(const epoch_schedule& schedule, size_t round, uint32_t replica) {
  const auto& live = schedule.live(round);
  return std::find(live.begin(), live.end(), replica) != live.end();
}

} // namespace

TEST_CASE("epoch_schedule with full membership gives exactly batch_plan's slices",
          "[data][schedule]") {
  for (size_t samples : {0, 1, 5, 7, 10, 64, 100, 101, 1000}) {
    for (size_t global_batch : {1, 2, 3, 7, 10, 32, 100, 128, 5000}) {
      for (uint32_t replicas : {1u, 2u, 3u, 4u, 5u, 8u, 16u}) {
        INFO("samples " << samples << ", global_batch " << global_batch << ", replicas "
                        << replicas);
        batch_plan plan(samples, global_batch, replicas);
        epoch_schedule schedule(samples, global_batch, iota_replicas(replicas));
        REQUIRE(schedule.rounds() == plan.rounds());
        for (size_t round = 0; round < plan.rounds(); ++round) {
          REQUIRE(schedule.round_size(round) == plan.round_size(round));
          REQUIRE(schedule.live(round) == iota_replicas(replicas));
          for (uint32_t r = 0; r < replicas; ++r) {
            batch_slice s = plan.slice(round, r);
            std::vector<uint32_t> expected(s.size);
            std::iota(expected.begin(), expected.end(), static_cast<uint32_t>(s.begin));
            REQUIRE(schedule.positions(round, r) == expected);
          }
        }
      }
    }
  }
}

TEST_CASE("epoch_schedule re-plans a small epoch as worked out by hand", "[data][schedule]") {
  epoch_schedule schedule(10, 4, {0, 1});
  REQUIRE(schedule.rounds() == 3);
  schedule.lose(0, 1, false);
  // Round 0 stays {0,1 | 2,3}; the lost share 2,3 leads the remaining work.
  REQUIRE(schedule.rounds() == 3);
  CHECK(schedule.positions(0, 0) == std::vector<uint32_t>{0, 1});
  CHECK(schedule.positions(0, 1) == std::vector<uint32_t>{2, 3});
  CHECK(schedule.positions(1, 0) == std::vector<uint32_t>{2, 3, 4, 5});
  CHECK(schedule.positions(1, 1).empty());
  CHECK(schedule.positions(2, 0) == std::vector<uint32_t>{6, 7, 8, 9});
  CHECK(schedule.live(0) == std::vector<uint32_t>{0, 1});
  CHECK(schedule.live(1) == std::vector<uint32_t>{0});
  CHECK(schedule.round_size(2) == 4);
}

TEST_CASE("epoch_schedule trains every sample once after one loss at any round",
          "[data][schedule]") {
  for (size_t samples : {1, 7, 10, 64, 101, 1000}) {
    for (size_t global_batch : {1, 3, 4, 10, 32}) {
      for (uint32_t replicas : {2u, 3u, 4u, 5u}) {
        epoch_schedule full(samples, global_batch, iota_replicas(replicas));
        size_t last = full.rounds() - 1;
        for (size_t round : {size_t{0}, last / 2, last}) {
          for (uint32_t lost = 0; lost < replicas; ++lost) {
            for (bool share_used : {false, true}) {
              INFO("samples " << samples << ", global_batch " << global_batch << ", replicas "
                              << replicas << ", lost " << lost << " in round " << round
                              << (share_used ? " after" : " before") << " using its share");
              epoch_schedule schedule = full;
              auto counts = trained_counts(schedule, {{round, lost, share_used}});
              REQUIRE(each_once(counts));
              // Rounds up to the loss are untouched, later ones exclude the lost.
              for (size_t r = 0; r <= round; ++r)
                for (uint32_t replica = 0; replica < replicas; ++replica)
                  REQUIRE(schedule.positions(r, replica) == full.positions(r, replica));
              for (size_t r = round + 1; r < schedule.rounds(); ++r) {
                REQUIRE_FALSE(is_live(schedule, r, lost));
                REQUIRE(schedule.positions(r, lost).empty());
                REQUIRE(schedule.live(r).size() == replicas - 1);
              }
            }
          }
        }
      }
    }
  }
}

TEST_CASE("epoch_schedule composes two losses in the same round", "[data][schedule]") {
  for (size_t samples : {10, 64, 101}) {
    for (size_t global_batch : {3, 8, 10}) {
      epoch_schedule full(samples, global_batch, iota_replicas(4));
      for (size_t round : {size_t{0}, full.rounds() / 2, full.rounds() - 1}) {
        for (bool first_used : {false, true}) {
          for (bool second_used : {false, true}) {
            INFO("samples " << samples << ", global_batch " << global_batch << ", round "
                            << round << ", uses " << first_used << second_used);
            epoch_schedule schedule = full;
            auto counts = trained_counts(
              schedule, {{round, 2, first_used}, {round, 0, second_used}});
            REQUIRE(each_once(counts));
            for (size_t r = round + 1; r < schedule.rounds(); ++r)
              REQUIRE(schedule.live(r) == std::vector<uint32_t>{1, 3});
            if (!second_used && round + 1 < schedule.rounds()) {
              // The second lost share leads the work after the round.
              auto lost_share = full.positions(round, 0);
              auto next = schedule.positions(round + 1, 1);
              size_t common = std::min(lost_share.size(), next.size());
              CHECK(std::equal(next.begin(), next.begin() + static_cast<std::ptrdiff_t>(common),
                               lost_share.begin()));
            }
          }
        }
      }
    }
  }
}

TEST_CASE("epoch_schedule keeps exactly once with losses in different rounds",
          "[data][schedule]") {
  for (size_t samples : {10, 64, 101, 1000}) {
    for (size_t global_batch : {3, 8, 10, 32}) {
      epoch_schedule full(samples, global_batch, iota_replicas(4));
      size_t first = full.rounds() / 3;
      for (bool first_used : {false, true}) {
        for (bool second_used : {false, true}) {
          INFO("samples " << samples << ", global_batch " << global_batch << ", uses "
                          << first_used << second_used);
          epoch_schedule schedule = full;
          schedule.lose(first, 1, first_used);
          size_t second = (first + 1 + schedule.rounds()) / 2;
          if (second >= schedule.rounds())
            continue;
          epoch_schedule replayed = full;
          auto counts = trained_counts(
            replayed, {{first, 1, first_used}, {second, 3, second_used}});
          REQUIRE(each_once(counts));
          // The second loss leaves the rounds of the first re-plan before it alone.
          for (size_t r = 0; r <= second; ++r)
            for (uint32_t replica = 0; replica < 4; ++replica)
              REQUIRE(replayed.positions(r, replica) == schedule.positions(r, replica));
          for (size_t r = second + 1; r < replayed.rounds(); ++r)
            REQUIRE(replayed.live(r) == std::vector<uint32_t>{0, 2});
        }
      }
    }
  }
}

TEST_CASE("epoch_schedule trains everything on the last survivor", "[data][schedule]") {
  epoch_schedule schedule(100, 10, iota_replicas(4));
  auto counts = trained_counts(schedule, {{1, 0, false}, {3, 3, true}, {3, 1, false}});
  CHECK(each_once(counts));
  for (size_t r = 4; r < schedule.rounds(); ++r) {
    CHECK(schedule.live(r) == std::vector<uint32_t>{2});
    CHECK(schedule.positions(r, 2).size() == schedule.round_size(r));
  }
}

TEST_CASE("epoch_schedule ends the epoch when the last live replica is lost",
          "[data][schedule]") {
  epoch_schedule schedule(100, 10, {0, 1});
  schedule.lose(2, 0, false);
  schedule.lose(4, 1, false);
  CHECK(schedule.rounds() == 5);
  CHECK(schedule.live(4) == std::vector<uint32_t>{1});
  CHECK(schedule.positions(4, 1).size() == 10);

  epoch_schedule alone(100, 10, {5});
  alone.lose(0, 5, true);
  CHECK(alone.rounds() == 1);
}

TEST_CASE("epoch_schedule splits over a non-contiguous live set in index order",
          "[data][schedule]") {
  batch_plan plan(101, 10, 3);
  epoch_schedule schedule(101, 10, {0, 2, 3});
  REQUIRE(schedule.rounds() == plan.rounds());
  const std::vector<uint32_t> live{0, 2, 3};
  for (size_t round = 0; round < plan.rounds(); ++round) {
    CHECK(schedule.positions(round, 1).empty());
    CHECK(schedule.positions(round, 4).empty());
    for (size_t i = 0; i < live.size(); ++i) {
      batch_slice s = plan.slice(round, i);
      auto share = schedule.positions(round, live[i]);
      REQUIRE(share.size() == s.size);
      if (!share.empty())
        CHECK(share.front() == s.begin);
    }
  }
  epoch_schedule lossy(101, 10, {0, 2, 3});
  auto counts = trained_counts(lossy, {{4, 2, false}});
  CHECK(each_once(counts));
  CHECK(lossy.live(5) == std::vector<uint32_t>{0, 3});
}

TEST_CASE("epoch_schedule grows by a round only for an unused share", "[data][schedule]") {
  epoch_schedule used(100, 10, iota_replicas(4));
  used.lose(3, 2, true);
  CHECK(used.rounds() == 10);

  epoch_schedule unused(100, 10, iota_replicas(4));
  unused.lose(3, 2, false);
  CHECK(unused.rounds() == 11);
  CHECK(unused.round_size(10) == 2); // the lost share of 2 spills into a short round

  // A replica with an empty share leaves nothing to redo.
  epoch_schedule empty_share(5, 3, iota_replicas(4));
  REQUIRE(empty_share.positions(0, 3).empty());
  empty_share.lose(0, 3, false);
  CHECK(empty_share.rounds() == 2);

  // An unused share in the last round becomes one more round.
  epoch_schedule at_end(100, 10, iota_replicas(4));
  at_end.lose(9, 0, false);
  CHECK(at_end.rounds() == 11);
  CHECK(at_end.round_size(10) == 3);
  at_end.lose(9, 1, true);
  CHECK(at_end.rounds() == 11);
  CHECK(at_end.live(10) == std::vector<uint32_t>{2, 3});
}

TEST_CASE("epoch_schedule keeps exactly once over random loss sequences", "[data][schedule]") {
  random_stream rng(2024);
  for (int trial = 0; trial < 300; ++trial) {
    size_t samples = 1 + static_cast<size_t>(rng.below(300));
    size_t global_batch = 1 + static_cast<size_t>(rng.below(40));
    uint32_t replicas = 1 + static_cast<uint32_t>(rng.below(6));
    epoch_schedule schedule(samples, global_batch, iota_replicas(replicas));
    std::vector<loss> losses;
    size_t round = 0;
    std::vector<uint32_t> alive = iota_replicas(replicas);
    while (!alive.empty() && rng.below(3) != 0) {
      round += static_cast<size_t>(rng.below(3));
      if (round >= schedule.rounds())
        break;
      size_t pick = static_cast<size_t>(rng.below(alive.size()));
      loss next{round, alive[pick], rng.below(2) == 0};
      alive.erase(alive.begin() + static_cast<std::ptrdiff_t>(pick));
      schedule.lose(next.round, next.replica, next.share_used);
      losses.push_back(next);
    }
    INFO("trial " << trial << ", samples " << samples << ", global_batch " << global_batch
                  << ", replicas " << replicas << ", losses " << losses.size());
    epoch_schedule replayed(samples, global_batch, iota_replicas(replicas));
    auto counts = trained_counts(replayed, losses);
    REQUIRE(replayed == schedule);
    if (alive.empty()) {
      REQUIRE(replayed.rounds() == losses.back().round + 1);
    } else {
      REQUIRE(each_once(counts));
    }
  }
}

TEST_CASE("epoch_schedule is the same for the same calls", "[data][schedule]") {
  auto build = [](bool share_used) {
    epoch_schedule schedule(1000, 32, {0, 1, 3, 4});
    schedule.lose(5, 3, share_used);
    schedule.lose(5, 0, false);
    schedule.lose(12, 4, true);
    return schedule;
  };
  CHECK(build(false) == build(false));
  CHECK(build(true) == build(true));
  CHECK(build(false) != build(true));
  CHECK(epoch_schedule(1000, 32, {0, 1}) != epoch_schedule(1000, 32, {0, 2}));
}

TEST_CASE("epoch_schedule handles a full Fashion-MNIST epoch with losses", "[data][schedule]") {
  epoch_schedule schedule(60000, 64, iota_replicas(8));
  REQUIRE(schedule.rounds() == 938);
  auto counts = trained_counts(schedule, {{100, 3, false}, {100, 5, true}, {700, 0, false}});
  CHECK(each_once(counts));
  CHECK(schedule.live(937) == std::vector<uint32_t>{1, 2, 4, 6, 7});
}
