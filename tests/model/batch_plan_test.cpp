// Tests for epoch permutations and the split of an epoch into rounds and
// replica slices.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <numeric>
#include <vector>

#include "model/data/batch_plan.hpp"

using namespace troupe;

TEST_CASE("epoch_permutation returns a permutation of 0..samples-1", "[data][batch_plan]") {
  for (size_t samples : {0, 1, 2, 3, 7, 100, 2000}) {
    INFO("samples = " << samples);
    auto perm = epoch_permutation(samples, 42, 3);
    REQUIRE(perm.size() == samples);
    std::sort(perm.begin(), perm.end());
    std::vector<uint32_t> identity(samples);
    std::iota(identity.begin(), identity.end(), 0u);
    CHECK(perm == identity);
  }
}

TEST_CASE("epoch_permutation is the same for the same seed and epoch", "[data][batch_plan]") {
  CHECK(epoch_permutation(1000, 7, 0) == epoch_permutation(1000, 7, 0));
  CHECK(epoch_permutation(1000, 7, 5) == epoch_permutation(1000, 7, 5));
}

TEST_CASE("epoch_permutation pins its values, so every platform shuffles alike",
          "[data][batch_plan]") {
  // Checked against an independent splitmix64 + multiply-shift + Fisher-Yates;
  // a change here breaks reproducibility across versions and mixed clusters.
  const std::vector<uint32_t> expected_order{1, 7, 2, 5, 6, 4, 0, 9, 8, 3};
  CHECK(epoch_permutation(10, 42, 0) == expected_order);
}

TEST_CASE("epoch_permutation differs across epochs and seeds", "[data][batch_plan]") {
  auto base = epoch_permutation(1000, 7, 0);
  CHECK(base != epoch_permutation(1000, 7, 1));
  CHECK(base != epoch_permutation(1000, 8, 0));
  CHECK(epoch_permutation(1000, 7, 1) != epoch_permutation(1000, 8, 1));
  std::vector<uint32_t> identity(1000);
  std::iota(identity.begin(), identity.end(), 0u);
  CHECK(base != identity);
}

TEST_CASE("epoch_permutation draws each order of three about equally often",
          "[data][batch_plan]") {
  // An off-by-one in Fisher-Yates (e.g. drawing from [0, i) instead of
  // [0, i]) makes some of the six orders impossible or twice as likely.
  std::map<std::vector<uint32_t>, int> seen;
  const int draws = 6000;
  for (int epoch = 0; epoch < draws; ++epoch)
    ++seen[epoch_permutation(3, 1234, static_cast<uint64_t>(epoch))];
  REQUIRE(seen.size() == 6);
  for (const auto& [order, times] : seen) {
    INFO("order " << order[0] << order[1] << order[2] << " seen " << times << " times");
    CHECK(times > 800);
    CHECK(times < 1200);
  }
}

TEST_CASE("batch_plan covers every sample once per epoch with slices by the documented rule",
          "[data][batch_plan]") {
  for (size_t samples : {0, 1, 5, 7, 10, 64, 100, 101, 1000, 2000}) {
    for (size_t global_batch : {1, 2, 3, 7, 10, 32, 64, 100, 128, 2000, 5000}) {
      for (size_t replicas : {1, 2, 3, 4, 5, 8, 16}) {
        INFO("samples " << samples << ", global_batch " << global_batch << ", replicas "
                        << replicas);
        batch_plan plan(samples, global_batch, replicas);
        REQUIRE(plan.rounds() == (samples + global_batch - 1) / global_batch);
        std::vector<int> covered(samples, 0);
        for (size_t round = 0; round < plan.rounds(); ++round) {
          size_t b = plan.round_size(round);
          bool last = round + 1 == plan.rounds();
          REQUIRE(b == (last ? samples - round * global_batch : global_batch));
          size_t next = round * global_batch;
          for (size_t r = 0; r < replicas; ++r) {
            batch_slice s = plan.slice(round, r);
            REQUIRE(s.begin == next);
            REQUIRE(s.size == b / replicas + (r < b % replicas ? 1 : 0));
            for (size_t i = s.begin; i < s.begin + s.size; ++i)
              ++covered[i];
            next += s.size;
          }
          REQUIRE(next == round * global_batch + b);
        }
        CHECK(std::all_of(covered.begin(), covered.end(), [](int n) { return n == 1; }));
      }
    }
  }
}

TEST_CASE("batch_plan gives the first b % R replicas one extra sample", "[data][batch_plan]") {
  batch_plan plan(100, 10, 4);
  std::vector<size_t> sizes;
  for (size_t r = 0; r < 4; ++r)
    sizes.push_back(plan.slice(0, r).size);
  CHECK(sizes == std::vector<size_t>{3, 3, 2, 2});
  CHECK(plan.slice(0, 2).begin == 6);
  CHECK(plan.slice(1, 0).begin == 10);
}

TEST_CASE("batch_plan keeps the last partial round", "[data][batch_plan]") {
  batch_plan plan(10, 4, 2);
  REQUIRE(plan.rounds() == 3);
  CHECK(plan.round_size(0) == 4);
  CHECK(plan.round_size(2) == 2);
  CHECK(plan.slice(2, 0).begin == 8);
  CHECK(plan.slice(2, 0).size == 1);
  CHECK(plan.slice(2, 1).begin == 9);
  CHECK(plan.slice(2, 1).size == 1);
}

TEST_CASE("batch_plan gives some replicas nothing when the batch is smaller than the replicas",
          "[data][batch_plan]") {
  batch_plan plan(5, 3, 4);
  REQUIRE(plan.rounds() == 2);
  std::vector<size_t> first, second;
  for (size_t r = 0; r < 4; ++r) {
    first.push_back(plan.slice(0, r).size);
    second.push_back(plan.slice(1, r).size);
  }
  CHECK(first == std::vector<size_t>{1, 1, 1, 0});
  CHECK(second == std::vector<size_t>{1, 1, 0, 0});
  CHECK(plan.slice(1, 3).begin == 5); // an empty slice sits at the round's end
}

TEST_CASE("batch_plan with one replica gives it each whole round", "[data][batch_plan]") {
  batch_plan plan(70, 32, 1);
  REQUIRE(plan.rounds() == 3);
  CHECK(plan.slice(1, 0).begin == 32);
  CHECK(plan.slice(1, 0).size == 32);
  CHECK(plan.slice(2, 0).begin == 64);
  CHECK(plan.slice(2, 0).size == 6);
}
