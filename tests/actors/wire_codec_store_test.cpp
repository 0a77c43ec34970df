// A store shard under --wire=bf16/fp16/int8: it steps fp32 masters, answers
// pushes with them rounded (one copy per version, shared by every answer;
// bf16 under int8), answers the coordinator with the masters, and refuses a
// gradient in another codec or one read off the wire malformed, naming the
// replica and round.
#include "tests/actors/store_fixture.hpp"

#include <cstring>
#include <limits>

#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>

#include "messages/float_codec.hpp"

using namespace troupe;
using namespace troupe::testing;

namespace {

std::vector<float> rounded(float_codec codec, std::vector<float> values) {
  round_in_place(codec, values.data(), values.size());
  return values;
}

void set_wire(store_config& options, float_codec codec) {
  options.wire = codec;
  options.optimizer.learning_rate = 0.1f; // steps that leave bf16's grid
}

} // namespace

TEST_CASE("a bf16 shard steps fp32 masters and answers every pusher with them rounded",
          "[store][wire]") {
  store_fixture f("sync", 2, [](store_config& o) { set_wire(o, float_codec::bf16); });
  f.watch(0);
  f.watch(1);
  const auto gradient = shared_floats{std::vector<float>(parameter_count, 1.0f / 3.0f)}
                          .rounded(float_codec::bf16);
  f.push(0, f.make_push(0, 0, 0, gradient));
  f.push(1, f.make_push(1, 0, 0, gradient));
  auto a = f.take(0);
  auto b = f.take(1);
  REQUIRE(a.params);
  REQUIRE(b.params);
  // One rounding pass for the version: both answers share its buffer.
  CHECK(a.params->values.data() == b.params->values.data());
  CHECK(a.params->values.codec == float_codec::bf16);
  const auto masters = f.current_params();
  CHECK(masters.values.codec == float_codec::fp32);
  CHECK(masters.values.to_vector() != a.params->values.to_vector()); // really rounded
  CHECK(rounded(float_codec::bf16, masters.values.to_vector()) == a.params->values.to_vector());
  const auto initial = initial_parameters();
  for (size_t i = 0; i < parameter_count; ++i)
    CHECK(masters.values.data()[i] == Approx(initial[i] - 0.1f * gradient.data()[0]));
}

TEST_CASE("a shard refuses a gradient in another codec than the run's, naming replica and round",
          "[store][wire]") {
  store_fixture f("sync", 1, [](store_config& o) { set_wire(o, float_codec::fp16); });
  f.watch(0);
  f.push(0, f.make_push(0, 0, 0, filled(parameter_count, 1.0f)));
  auto r = f.take(0);
  REQUIRE(r.error);
  CHECK(*r.error == troupe_errc::bad_gradient);
  CHECK_THAT(describe(*r.error), Catch::Contains("gradient from replica 0 for round 0 came as "
                                                 "fp32, but the run's --wire is fp16"));
  CHECK(f.current_params().version == 0);
}

TEST_CASE("a shard refuses a 16-bit gradient that arrived malformed, naming replica and round",
          "[store][wire]") {
  store_fixture f("sync", 1, [](store_config& o) { set_wire(o, float_codec::bf16); });
  f.watch(0);
  shared_floats malformed;
  malformed.codec = float_codec::bf16;
  malformed.fault = "10 bytes for 6 bf16 values"; // as the deserializer leaves it
  f.push(0, f.make_push(0, 0, 0, malformed));
  auto r = f.take(0);
  REQUIRE(r.error);
  CHECK(*r.error == troupe_errc::bad_gradient);
  CHECK_THAT(describe(*r.error),
             Catch::Contains("gradient from replica 0 for round 0 arrived malformed: "
                             "10 bytes for 6 bf16 values"));
  CHECK(f.stats().rejected == 1);
}

TEST_CASE("an int8 shard steps on what the int8 values stand for and answers with bf16 "
          "parameters",
          "[store][wire][int8]") {
  store_fixture f("sync", 2, [](store_config& o) { set_wire(o, float_codec::int8); });
  f.watch(0);
  f.watch(1);
  const std::vector<float> values{0.3f, -0.01f, 0.2f, 0.0f, 0.07f, -0.3f};
  const auto gradient = shared_floats{values}.rounded(float_codec::int8);
  REQUIRE(gradient.int8);
  CHECK(gradient.to_vector() != values); // really quantized
  f.push(0, f.make_push(0, 0, 0, gradient));
  f.push(1, f.make_push(1, 0, 0, gradient));
  auto a = f.take(0);
  REQUIRE(a.params);
  CHECK(a.params->values.codec == float_codec::bf16);
  const auto masters = f.current_params();
  CHECK(masters.values.codec == float_codec::fp32);
  CHECK(rounded(float_codec::bf16, masters.values.to_vector()) == a.params->values.to_vector());
  const auto initial = initial_parameters();
  for (size_t i = 0; i < parameter_count; ++i)
    CHECK(masters.values.data()[i] == Approx(initial[i] - 0.1f * gradient.data()[i]));
}

TEST_CASE("a shard refuses an int8 gradient whose scale arrived not finite, naming replica "
          "and round",
          "[store][wire][int8][serialization]") {
  store_fixture f("sync", 1, [](store_config& o) { set_wire(o, float_codec::int8); });
  f.watch(0);
  auto push = f.make_push(0, 0, 0, filled(parameter_count, 0.5f).rounded(float_codec::int8));
  std::vector<char> bytes;
  caf::binary_serializer sink{f.sys, bytes};
  REQUIRE_FALSE(sink(push));
  // The gradient ends the message with its one block's scale: make it NaN.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  float scale = 0;
  std::memcpy(&scale, bytes.data() + bytes.size() - sizeof(float), sizeof(float));
  REQUIRE(scale == 0.5f / 127.0f);
  std::memcpy(bytes.data() + bytes.size() - sizeof(float), &nan, sizeof(float));
  push_msg read;
  caf::binary_deserializer source{f.sys, bytes};
  REQUIRE_FALSE(source(read));
  f.push(0, std::move(read));
  auto r = f.take(0);
  REQUIRE(r.error);
  CHECK(*r.error == troupe_errc::bad_gradient);
  CHECK_THAT(describe(*r.error),
             Catch::Contains("gradient from replica 0 for round 0 arrived malformed: the scale "
                             "of block 0 is nan, not a finite magnitude"));
  CHECK(f.current_params().version == 0);
}

TEST_CASE("a shard refuses an int8 gradient with a non-finite value, and one whose blocks "
          "start elsewhere than its range",
          "[store][wire][int8]") {
  store_fixture f("async", 1, [](store_config& o) { set_wire(o, float_codec::int8); });
  f.watch(0);
  std::vector<float> values(parameter_count, 0.5f);
  values[2] = std::numeric_limits<float>::infinity();
  f.push(0, f.make_push(0, 0, 0, shared_floats{values}.rounded(float_codec::int8)));
  auto r = f.take(0);
  REQUIRE(r.error);
  CHECK(*r.error == troupe_errc::bad_gradient);
  CHECK_THAT(describe(*r.error), Catch::Contains("gradient from replica 0 contains NaN or Inf"));
  // Parameters 300 to 305 of a longer gradient, pushed to a shard of 0 to 5.
  const auto longer = filled(400, 0.25f).rounded(float_codec::int8);
  f.push(0, f.make_push(0, 1, 0, longer.slice(300, parameter_count)));
  r = f.take(0);
  REQUIRE(r.error);
  CHECK_THAT(describe(*r.error),
             Catch::Contains("gradient from replica 0 for round 1 arrived malformed: its int8 "
                             "values start at parameter 300, store shard 0's range at 0"));
  CHECK(f.current_params().version == 0);
}
