// A store shard's coded answers (messages/answer_delta.hpp): a push that
// asks gets its answer coded against the version it names once the shard
// kept it, and applying the code to that version gives the very bits of the
// whole answer another replica got; a version not kept, or one named by a
// replica of another membership epoch, gets the answer whole; and a
// replica's join refuses a code against a slice it does not hold.
#include "tests/actors/store_fixture.hpp"

#include "actors/replica/store_group.hpp"
#include "messages/float_codec.hpp"

using namespace troupe;
using namespace troupe::testing;

namespace {

// One sync round of two replicas with small gradients (in `codec`); replica
// 0 asks for its answer coded against `base` (if any), with `membership`.
std::pair<params_msg, params_msg> round_of_two(store_fixture& f, uint64_t round,
                                               std::optional<uint64_t> base,
                                               uint64_t membership = 0,
                                               float_codec codec = float_codec::fp32) {
  const auto gradient =
    shared_floats{std::vector<float>(parameter_count, 0.01f)}.rounded(codec);
  auto asking = f.make_push(0, round, round, gradient);
  asking.wants_delta = base.has_value();
  asking.delta_base = base.value_or(0);
  asking.delta_membership = membership;
  f.push(0, std::move(asking));
  f.push(1, f.make_push(1, round, round, gradient));
  auto a = f.take(0);
  auto b = f.take(1);
  REQUIRE(a.params);
  REQUIRE(b.params);
  return {*a.params, *b.params};
}

} // namespace

TEST_CASE("a shard codes an answer against the version its pusher holds, once it kept it",
          "[store][wire][delta]") {
  for (auto codec : {float_codec::fp32, float_codec::bf16}) {
    INFO(codec_name(codec));
    store_fixture f("sync", 2, [codec](store_config& o) {
      o.wire = codec;
      o.optimizer.learning_rate = 0.1f;
    });
    f.watch(0);
    f.watch(1);
    auto [first, first_other] = round_of_two(f, 0, std::nullopt, 0, codec);
    CHECK_FALSE(first.delta);
    // The first ask: the shard starts keeping versions with this one.
    auto [second, second_other] = round_of_two(f, 1, first.version, 0, codec);
    CHECK_FALSE(second.delta);
    REQUIRE(second.values.size() == parameter_count);
    auto [third, third_other] = round_of_two(f, 2, second.version, 0, codec);
    REQUIRE(third.delta);
    CHECK(third.values.size() == 0);
    CHECK(third.delta.base_version == second.version);
    CHECK(third.delta.codec == codec);
    CHECK(third.delta.size_in_bytes() < parameter_count * codec_width(codec));
    CHECK_FALSE(third_other.delta); // it did not ask
    auto values = second.values.to_vector();
    CHECK(apply_delta(third.delta, values.data(), values.size()).empty());
    CHECK(same_bytes(shared_floats{values}, third_other.values));
    // A version it never kept, and a replica of another membership epoch.
    auto [fourth, fourth_other] = round_of_two(f, 3, first.version, 0, codec);
    CHECK_FALSE(fourth.delta);
    CHECK(same_bytes(fourth.values, fourth_other.values));
    auto [fifth, fifth_other] = round_of_two(f, 4, fourth.version, 7, codec);
    CHECK_FALSE(fifth.delta);
  }
}

TEST_CASE("a replica's join applies a code to the slice it holds and refuses one against "
          "another version",
          "[store][wire][delta]") {
  store_fixture f("sync", 2, [](store_config& o) { o.optimizer.learning_rate = 0.1f; });
  f.watch(0);
  f.watch(1);
  auto [first, first_other] = round_of_two(f, 0, std::nullopt);
  auto [second, second_other] = round_of_two(f, 1, first.version);
  auto [third, third_other] = round_of_two(f, 2, second.version);
  REQUIRE(third.delta);
  std::vector<float> joined(parameter_count);
  std::optional<slice_version> held;
  CHECK(join_answer(second, joined, held).empty());
  REQUIRE(held);
  CHECK(held->version == second.version);
  // Held against another version: refused, named, and the slice kept.
  auto stale = held;
  stale->version = first.version;
  auto fault = join_answer(third, joined, stale);
  CHECK_THAT(fault, Catch::Contains("coded against version " + std::to_string(second.version)
                                    + ", the replica holds " + std::to_string(first.version)));
  CHECK(same_bytes(shared_floats{joined}, second.values));
  CHECK(join_answer(third, joined, held).empty());
  CHECK(held->version == third.version);
  CHECK(same_bytes(shared_floats{joined}, third_other.values));
}
