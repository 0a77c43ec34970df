// The listener a replica hands its model: a planned shard's slice leaves
// once the model has written all of it and told the batch's sums, rounded
// to the run's codec, once; other slices are left to the replica.
#include <catch2/catch.hpp>

#include <vector>

#include "actors/replica/slices_ahead.hpp"

using namespace troupe;
using namespace troupe::detail;

namespace {

struct sent_slice {
  size_t shard;
  double loss_sum;
};

} // namespace

TEST_CASE("a planned slice leaves once it is written whole and the sums are known, rounded, "
          "once",
          "[replica][ahead]") {
  const std::vector<shard_range> ranges{{0, 16}, {16, 16}, {32, 8}};
  std::vector<float> gradient(40, 1.0f + 1.0f / 1024); // bf16 rounds it to 1
  std::vector<sent_slice> sent;
  ahead_plan plan;
  plan.shards = {true, false, true};
  plan.send = [&](size_t k, const batch_result& sums) { sent.push_back({k, sums.loss_sum}); };
  slices_ahead ahead(ranges, plan, float_codec::bf16, gradient.data());
  const auto wanted = ahead.wanted_first();
  REQUIRE(wanted.size() == 2);
  CHECK((wanted[0].offset == 0 && wanted[0].count == 16));
  CHECK((wanted[1].offset == 32 && wanted[1].count == 8));

  ahead.done({30, 6}); // the end of shard 1 and the start of shard 2
  ahead.done({38, 2});
  CHECK(sent.empty()); // shard 2 lacks [36, 38)
  ahead.done({36, 2});
  CHECK(sent.empty()); // whole, but the sums are not known yet
  ahead.loss_known(batch_result{2.5, 3});
  REQUIRE(sent.size() == 1);
  CHECK(sent[0].shard == 2);
  CHECK(sent[0].loss_sum == 2.5);
  CHECK(ahead.sent(2));
  CHECK(gradient[32] == 1.0f);
  CHECK(gradient[39] == 1.0f);
  CHECK(gradient[31] == 1.0f + 1.0f / 1024); // shard 1 is the replica's to round

  ahead.done({8, 8});
  ahead.done({0, 10}); // overlaps what was told
  REQUIRE(sent.size() == 2);
  CHECK(sent[1].shard == 0);
  ahead.done({0, 40}); // told again: nothing leaves twice
  CHECK(sent.size() == 2);
  CHECK_FALSE(ahead.sent(1));
  CHECK(ahead.wanted_first().empty());
}
