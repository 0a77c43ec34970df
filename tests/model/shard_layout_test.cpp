// The store's shard split and the optimizer-state slicing that lets a
// checkpoint of one flat buffer resume with any number of shards.
#include <catch2/catch.hpp>

#include <numeric>
#include <vector>

#include "model/shard_layout.hpp"

using namespace troupe;

TEST_CASE("shards tile the buffer in order, aligned to 64 bytes, as even as that allows",
          "[shards]") {
  const size_t count = 101770; // the Keras MNIST example's MLP 784-128relu-10
  for (size_t shards = 1; shards <= 14; ++shards) {
    auto ranges = split_into_shards(count, shards);
    REQUIRE(ranges);
    REQUIRE(ranges->size() == shards);
    size_t next = 0;
    size_t smallest = count;
    size_t largest = 0;
    for (const auto& range : *ranges) {
      CHECK(range.offset == next);
      CHECK(range.offset % shard_alignment == 0);
      next = range.offset + range.count;
      smallest = std::min(smallest, range.count);
      largest = std::max(largest, range.count);
    }
    CHECK(next == count);
    CHECK(largest - smallest < 2 * shard_alignment);
  }
  const auto two = *split_into_shards(count, 2);
  CHECK(two[0].count == 50880);
  CHECK(two[1].offset == 50880);
  CHECK(two[1].count == 50890);
}

TEST_CASE("a split into no shards, or into shards smaller than a cache line, is an error",
          "[shards]") {
  auto none = split_into_shards(1000, 0);
  REQUIRE_FALSE(none);
  CHECK(none.error().message.find("at least one shard") != std::string::npos);
  auto too_many = split_into_shards(100, 7);
  REQUIRE_FALSE(too_many);
  CHECK(too_many.error().message.find("7 store shards are too many for 100 parameters")
        != std::string::npos);
  CHECK(split_into_shards(100, 6)); // 16 floats each, the last 20
  CHECK(split_into_shards(5, 1));   // one shard owns any buffer
}

TEST_CASE("optimizer state sliced per shard and placed back is the whole state again",
          "[shards]") {
  const size_t count = 1000;
  for (size_t planes : {0, 1, 2}) {
    std::vector<float> state(planes * count);
    std::iota(state.begin(), state.end(), 0.0f);
    std::vector<float> rebuilt(state.size(), -1.0f);
    const auto ranges = split_into_shards(count, 3);
    REQUIRE(ranges);
    for (const auto& range : *ranges) {
      auto part = slice_optimizer_state(state.data(), state.size(), count, range);
      REQUIRE(part.size() == planes * range.count);
      if (planes == 2) // Adam: m of the range, then v of the range
        CHECK(part[range.count] == state[count + range.offset]);
      place_optimizer_state(part.data(), part.size(), count, range, rebuilt.data());
    }
    CHECK(rebuilt == state);
  }
}
