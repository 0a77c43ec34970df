// The wire codecs (--wire): rounding to bf16 and fp16 to nearest, ties to
// even, with subnormals, NaN, Inf and fp16's overflow; and codec'd floats on
// the wire: 16-bit values, widened on arrival, a malformed block named.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include <caf/all.hpp>

#include "messages/float_codec.hpp"
#include "messages/protocol.hpp"
#include "messages/register.hpp"

using namespace troupe;

namespace {

float float_of(uint32_t bits) {
  float value = 0;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

uint32_t bits_of(float value) {
  uint32_t bits = 0;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

struct codec_config : caf::actor_system_config {
  codec_config() { register_messages(*this); }
};

std::vector<char> serialized(caf::actor_system& sys, push_msg push) {
  std::vector<char> buf;
  caf::binary_serializer sink{sys, buf};
  REQUIRE_FALSE(sink(push));
  return buf;
}

push_msg codec_push(float_codec codec, std::vector<float> values) {
  push_msg push;
  push.replica = 2;
  push.round = 7;
  push.batch_size = 4;
  push.gradient = shared_floats{std::move(values)}.rounded(codec);
  return push;
}

} // namespace

TEST_CASE("bf16 rounds to nearest with ties to even and keeps NaN, Inf and subnormals",
          "[wire][codec]") {
  // 1 + 2^-8 lies halfway between 1 and 1 + 2^-7: even is 1.
  CHECK(to_bf16(float_of(0x3F808000u)) == 0x3F80u);
  // 1 + 3 x 2^-8 lies halfway between 1 + 2^-7 (odd) and 1 + 2^-6: up.
  CHECK(to_bf16(float_of(0x3F818000u)) == 0x3F82u);
  CHECK(to_bf16(float_of(0x3F808001u)) == 0x3F81u); // just above half: up
  CHECK(to_bf16(-1.0f) == 0xBF80u);
  CHECK(to_bf16(std::numeric_limits<float>::infinity()) == 0x7F80u);
  CHECK(to_bf16(-std::numeric_limits<float>::infinity()) == 0xFF80u);
  CHECK(to_bf16(std::numeric_limits<float>::max()) == 0x7F80u); // rounds up to Inf
  const uint16_t nan = to_bf16(float_of(0x7F800001u)); // payload in the low bits only
  CHECK(std::isnan(from_bf16(nan)));
  CHECK(std::isnan(from_bf16(to_bf16(-std::numeric_limits<float>::quiet_NaN()))));
  CHECK(std::signbit(from_bf16(to_bf16(-std::numeric_limits<float>::quiet_NaN()))));
  // Subnormals round like any other float: 0x00018000 is a tie, to even.
  CHECK(to_bf16(float_of(0x00018000u)) == 0x0002u);
  CHECK(to_bf16(float_of(0x00008000u)) == 0x0000u);
  CHECK(bits_of(from_bf16(0x0001u)) == 0x00010000u);
  CHECK(std::signbit(from_bf16(to_bf16(-0.0f))));
}

TEST_CASE("fp16 rounds to nearest with ties to even, overflows to Inf and keeps subnormals",
          "[wire][codec]") {
  CHECK(to_fp16(1.0f) == 0x3C00u);
  CHECK(to_fp16(-2.0f) == 0xC000u);
  // 1 + 2^-11 lies halfway between 1 and 1 + 2^-10: even is 1; 1 + 3 x 2^-11: up.
  CHECK(to_fp16(1.0f + std::ldexp(1.0f, -11)) == 0x3C00u);
  CHECK(to_fp16(1.0f + 3 * std::ldexp(1.0f, -11)) == 0x3C02u);
  CHECK(to_fp16(65504.0f) == 0x7BFFu);
  CHECK(to_fp16(65519.0f) == 0x7BFFu);
  CHECK(to_fp16(65520.0f) == 0x7C00u); // the tie above the largest half: Inf
  CHECK(to_fp16(-1e6f) == 0xFC00u);
  CHECK(to_fp16(std::numeric_limits<float>::infinity()) == 0x7C00u);
  CHECK(std::isnan(from_fp16(to_fp16(std::numeric_limits<float>::quiet_NaN()))));
  CHECK(std::isnan(from_fp16(to_fp16(float_of(0x7F800001u)))));
  // Subnormal halves: units of 2^-24; 2^-25 is a tie with 0 (even), a bit
  // more is one unit; 2^-14 - 2^-25 rounds up to the smallest normal.
  CHECK(to_fp16(std::ldexp(1.0f, -24)) == 0x0001u);
  CHECK(to_fp16(std::ldexp(1.0f, -25)) == 0x0000u);
  CHECK(to_fp16(std::ldexp(1.5f, -25)) == 0x0001u);
  CHECK(to_fp16(std::ldexp(3.0f, -25)) == 0x0002u); // 1.5 units: tie, to even 2
  CHECK(to_fp16(std::ldexp(1.0f, -14) - std::ldexp(1.0f, -25)) == 0x0400u);
  CHECK(from_fp16(0x0001u) == std::ldexp(1.0f, -24));
  CHECK(from_fp16(0x03FFu) == std::ldexp(1023.0f, -24));
  CHECK(to_fp16(std::numeric_limits<float>::denorm_min()) == 0x0000u);
  CHECK(std::signbit(from_fp16(to_fp16(-0.0f))));
}

TEST_CASE("every bf16 and every finite fp16 survives a round trip through float",
          "[wire][codec]") {
  for (uint32_t h = 0; h <= 0xFFFFu; ++h) {
    const auto bits = static_cast<uint16_t>(h);
    if (!std::isnan(from_bf16(bits)))
      REQUIRE(to_bf16(from_bf16(bits)) == bits);
    if (!std::isnan(from_fp16(bits)))
      REQUIRE(to_fp16(from_fp16(bits)) == bits);
  }
}

TEST_CASE("a codec's floats travel as 16-bit values and come back the same bits",
          "[wire][codec][serialization]") {
  codec_config cfg;
  caf::actor_system sys{cfg};
  const std::vector<float> values{1.0f / 3.0f, -2.5e-3f, 7e4f, 1e-7f};
  for (auto codec : {float_codec::bf16, float_codec::fp16}) {
    auto push = codec_push(codec, values);
    const auto fp32_bytes = serialized(sys, codec_push(float_codec::fp32, values)).size();
    const auto buf = serialized(sys, push);
    // Two bytes a value instead of four, and one for the block's length.
    CHECK(buf.size() == fp32_bytes - values.size() * 2 + 1);
    push_msg back;
    caf::binary_deserializer source{sys, buf};
    REQUIRE_FALSE(source(back));
    CHECK(back.gradient.fault.empty());
    CHECK(back.gradient.codec == codec);
    REQUIRE(back.gradient.size() == values.size());
    CHECK(std::memcmp(back.gradient.data(), push.gradient.data(),
                      values.size() * sizeof(float)) == 0);
  }
}

TEST_CASE("a 16-bit block of the wrong length for its count is read as a fault that names it",
          "[wire][codec][serialization]") {
  codec_config cfg;
  caf::actor_system sys{cfg};
  auto buf = serialized(sys, codec_push(float_codec::bf16, {1.0f, 2.0f, 3.0f, 4.0f}));
  // The gradient ends the message: codec (1), count (4), the block's length
  // (8, one varbyte each), 8 bytes. Say 6 and drop two bytes.
  const size_t at = buf.size() - 8 - 3;
  REQUIRE(buf[at] == 1);
  REQUIRE(buf[at + 1] == 4);
  REQUIRE(buf[at + 2] == 8);
  buf[at + 2] = 6;
  buf.resize(buf.size() - 2);
  push_msg back;
  caf::binary_deserializer source{sys, buf};
  REQUIRE_FALSE(source(back));
  CHECK(back.gradient.size() == 0);
  CHECK(back.gradient.fault == "6 bytes for 4 bf16 values");
  CHECK(back.replica == 2);
  CHECK(back.round == 7);
}
