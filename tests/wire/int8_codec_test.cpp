// --wire=int8: block-scaled quantization (round to nearest, ties to even,
// clamped, zero blocks), error feedback, slices that straddle blocks, and the
// int8 form on the wire, whose malformed variants are read as faults.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include <caf/all.hpp>

#include "messages/float_codec.hpp"
#include "messages/int8_blocks.hpp"
#include "messages/protocol.hpp"
#include "messages/register.hpp"
#include "model/shard_layout.hpp"
#include "tests/actors/serial_roundtrip.hpp"

using namespace troupe;

namespace {

struct int8_config : caf::actor_system_config {
  int8_config() { register_messages(*this); }
};

std::vector<float> random_values(size_t count, uint32_t seed) {
  std::mt19937 gen{seed};
  std::normal_distribution<float> normal{0.0f, 0.01f};
  std::vector<float> values(count);
  for (auto& v : values)
    v = normal(gen);
  return values;
}

bool same_bits(const float* a, const float* b, size_t count) {
  return std::memcmp(a, b, count * sizeof(float)) == 0;
}

// A push whose gradient is the bytes of a shared_floats in the int8 form,
// written field by field as inspect(serializer&) would: the codec, the
// count, the first parameter, the values and the scales, each with its length.
std::vector<char> crafted_push(caf::actor_system& sys, size_t count, uint64_t first,
                               std::vector<int8_t> values, std::vector<float> scales) {
  push_msg push;
  push.replica = 4;
  push.round = 9;
  push.batch_size = 8;
  std::vector<char> buf;
  caf::binary_serializer sink{sys, buf};
  REQUIRE_FALSE(sink(push));
  REQUIRE(buf.size() >= 2);
  buf.resize(buf.size() - 2); // the empty gradient: codec 0, count 0
  sink.seek(buf.size());
  auto codec = static_cast<uint8_t>(float_codec::int8);
  size_t bytes = values.size();
  size_t scale_count = scales.size();
  REQUIRE_FALSE(sink(codec));
  REQUIRE_FALSE(sink.begin_sequence(count));
  REQUIRE_FALSE(sink(first));
  REQUIRE_FALSE(sink.begin_sequence(bytes));
  if (bytes > 0)
    REQUIRE_FALSE(sink.apply_raw(bytes, values.data()));
  REQUIRE_FALSE(sink.begin_sequence(scale_count));
  if (scale_count > 0)
    REQUIRE_FALSE(sink.apply_raw(scale_count * sizeof(float), scales.data()));
  return buf;
}

push_msg read_push(caf::actor_system& sys, const std::vector<char>& buf) {
  return testing::deserialize<push_msg>(sys, buf);
}

} // namespace

TEST_CASE("int8 rounds x / scale to nearest with ties to even and clamps to [-127, 127]",
          "[wire][int8]") {
  // A block whose largest magnitude is 127 has scale 1: x / scale is x.
  std::vector<float> block{127.0f, 0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 126.5f, 0.49f, -3.51f};
  const auto q = quantize_int8(block.data(), block.size(), 0);
  REQUIRE(q.scales.size() == 1);
  CHECK(q.scales[0] == 1.0f);
  CHECK(q.values == std::vector<int8_t>{127, 0, 2, 2, 0, -2, -2, 126, 0, -4});
  // A quotient over 127 (a block's largest divided by its own scale can be
  // one) is clamped, never rounded to 128.
  CHECK(int8_of(127.5f, 1.0f) == 127);
  CHECK(int8_of(-128.0f, 1.0f) == -127);
  CHECK(int8_of(1e30f, 1.0f) == 127);
  CHECK(int8_of(3.0f, 0.0f) == 0);
  // Every block's largest magnitude is 127 (or -127) times its scale.
  const auto values = random_values(3 * int8_block_size, 5);
  const auto r = quantize_int8(values.data(), values.size(), 0);
  for (size_t b = 0; b < 3; ++b) {
    float largest = 0;
    int top = 0;
    for (size_t i = b * int8_block_size; i < (b + 1) * int8_block_size; ++i) {
      largest = std::max(largest, std::fabs(values[i]));
      top = std::max(top, std::abs(int{r.values[i]}));
    }
    CHECK(r.scales[b] == largest / 127.0f);
    CHECK(top == 127);
  }
}

TEST_CASE("int8 dequantizes to q * scale, each value within half a step of its float",
          "[wire][int8]") {
  const size_t count = 2 * int8_block_size + 37; // a short last block
  const auto values = random_values(count, 7);
  const auto q = quantize_int8(values.data(), count, 0);
  REQUIRE(q.scales.size() == 3);
  std::vector<float> back(count);
  dequantize_int8(q, 0, count, back.data());
  for (size_t i = 0; i < count; ++i) {
    const float scale = q.scale_of(i);
    CHECK(back[i] == static_cast<float>(q.values[i]) * scale);
    CHECK(std::fabs(back[i] - values[i]) <= 0.5f * scale * (1.0f + 1e-5f));
  }
  // round_into is the same quantization, without error feedback.
  std::vector<float> rounded(count);
  round_into(float_codec::int8, values.data(), count, rounded.data());
  CHECK(same_bits(rounded.data(), back.data(), count));
}

TEST_CASE("an int8 block of zeros has scale 0 and stays zeros; a non-finite value poisons "
          "its block only",
          "[wire][int8]") {
  std::vector<float> values(3 * int8_block_size, 0.25f);
  std::fill_n(values.begin(), int8_block_size, 0.0f);
  values[2 * int8_block_size + 3] = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> residual(values.size(), 0.0f);
  auto gradient = values;
  const auto q = quantize_with_feedback(gradient.data(), residual.data(), gradient.size());
  CHECK(q.scales[0] == 0.0f);
  CHECK(q.scales[1] == 0.25f / 127.0f);
  CHECK(std::isnan(q.scales[2]));
  for (size_t i = 0; i < int8_block_size; ++i) {
    REQUIRE(q.values[i] == 0);
    REQUIRE(gradient[i] == 0.0f);
    REQUIRE(residual[i] == 0.0f);
    REQUIRE(gradient[int8_block_size + i] == 127.0f * (0.25f / 127.0f));
    REQUIRE(std::isnan(gradient[2 * int8_block_size + i]));
    REQUIRE(residual[2 * int8_block_size + i] == 0.0f);
  }
  std::vector<float> inf(8, 1.0f);
  inf[5] = -std::numeric_limits<float>::infinity();
  CHECK(std::isinf(int8_scale(inf.data(), inf.size())));
}

TEST_CASE("int8 error feedback carries what a step left out into the next ones",
          "[wire][int8]") {
  // Scale 1 (the block's 127): 0.3 is below half a step and rounds to 0.
  std::vector<float> residual(2, 0.0f);
  std::vector<float> g{127.0f, 0.3f};
  quantize_with_feedback(g.data(), residual.data(), 2);
  CHECK(g[1] == 0.0f);
  CHECK(residual[1] == 0.3f);
  g = {127.0f, 0.3f};
  quantize_with_feedback(g.data(), residual.data(), 2);
  CHECK(g[1] == 1.0f); // 0.3 + 0.3 rounds to 1
  CHECK(residual[1] == (0.3f + 0.3f) - 1.0f);
  CHECK(residual[0] == 0.0f);
  // Over the steps, what was sent plus what is left is what was computed.
  const auto values = random_values(int8_block_size, 3);
  std::vector<double> sent(values.size(), 0.0);
  std::vector<float> r(values.size(), 0.0f);
  for (int step = 0; step < 20; ++step) {
    auto x = values;
    quantize_with_feedback(x.data(), r.data(), x.size());
    for (size_t i = 0; i < x.size(); ++i)
      sent[i] += x[i];
  }
  for (size_t i = 0; i < values.size(); ++i)
    CHECK(sent[i] + r[i] == Approx(20.0 * values[i]).margin(1e-6));
}

TEST_CASE("int8 error feedback is, value by value, x = g + r rounded with int8_of at its "
          "block's scale, and the new residual x - q * s, in a separate buffer too",
          "[wire][int8]") {
  const size_t count = 3 * int8_block_size + 19; // a short last block
  const auto g = random_values(count, 11);
  auto r = random_values(count, 12);
  for (auto& x : r)
    x *= 0.01f;
  auto pushed = g;
  std::vector<float> next(count);
  const auto q = quantize_with_feedback(pushed.data(), r.data(), next.data(), count);
  std::vector<float> x(count);
  for (size_t i = 0; i < count; ++i)
    x[i] = g[i] + r[i];
  REQUIRE(q.scales.size() == 4);
  for (size_t b = 0; b < q.scales.size(); ++b) {
    const size_t begin = b * int8_block_size;
    const float scale = int8_scale(x.data() + begin, std::min(count - begin, int8_block_size));
    CHECK(same_bits(&q.scales[b], &scale, 1));
  }
  for (size_t i = 0; i < count; ++i) {
    const float scale = q.scale_of(i);
    const int8_t expected = int8_of(x[i], scale);
    REQUIRE(q.values[i] == expected);
    const float stands_for = static_cast<float>(expected) * scale;
    REQUIRE(same_bits(&pushed[i], &stands_for, 1));
    const float left = x[i] - stands_for;
    REQUIRE(same_bits(&next[i], &left, 1));
  }
}

TEST_CASE("int8 slices of one gradient, cut where shards cut it, travel with their blocks' "
          "scales and widen to the whole vector's values",
          "[wire][int8][serialization]") {
  int8_config cfg;
  caf::actor_system sys{cfg};
  const size_t count = 4 * int8_block_size + 100;
  const auto whole = shared_floats{random_values(count, 11)}.rounded(float_codec::int8);
  REQUIRE(whole.int8);
  for (size_t shards : {1, 2, 3, 5}) {
    auto ranges = split_into_shards(count, shards);
    REQUIRE(ranges);
    std::vector<float> joined(count);
    for (const auto& range : *ranges) {
      push_msg push;
      push.gradient = whole.slice(range.offset, range.count);
      std::vector<char> buf;
      caf::binary_serializer sink{sys, buf};
      REQUIRE_FALSE(sink(push));
      const auto back = read_push(sys, buf);
      INFO(shards << " shards, range at " << range.offset);
      REQUIRE(back.gradient.fault.empty());
      REQUIRE(back.gradient.size() == range.count);
      REQUIRE(back.gradient.int8);
      CHECK(back.gradient.first_parameter() == range.offset);
      CHECK(back.gradient.int8->scales.size() == int8_blocks_spanned(range.offset, range.count));
      CHECK(back.gradient.int8->scales.front() == whole.int8->scales[range.offset / 256]);
      std::memcpy(joined.data() + range.offset, back.gradient.data(),
                  range.count * sizeof(float));
    }
    CHECK(same_bits(joined.data(), whole.data(), count));
  }
  // A slice from the middle of one block to the middle of another: 2 scales.
  CHECK(int8_blocks_spanned(200, 100) == 2);
  CHECK(int8_blocks_spanned(256, 256) == 1);
  CHECK(int8_blocks_spanned(255, 258) == 3);
}

TEST_CASE("an int8 gradient takes a byte a value and a float a block on the wire",
          "[wire][int8][serialization]") {
  int8_config cfg;
  caf::actor_system sys{cfg};
  const auto values = random_values(1000, 2);
  push_msg fp32;
  fp32.gradient = shared_floats{values};
  push_msg int8;
  int8.gradient = shared_floats{values}.rounded(float_codec::int8);
  std::vector<char> fp32_bytes;
  std::vector<char> int8_bytes;
  caf::binary_serializer a{sys, fp32_bytes};
  caf::binary_serializer b{sys, int8_bytes};
  REQUIRE_FALSE(a(fp32));
  REQUIRE_FALSE(b(int8));
  // 1000 bytes and 4 scales instead of 4000 bytes, plus the first parameter
  // (8) and two lengths (2 + 1 varbytes).
  CHECK(int8_bytes.size() == fp32_bytes.size() - 4000 + 1000 + 4 * 4 + 8 + 2 + 1);
  const auto back = read_push(sys, int8_bytes);
  CHECK(back.gradient.codec == float_codec::int8);
  REQUIRE(back.gradient.size() == values.size());
  CHECK(same_bits(back.gradient.data(), int8.gradient.data(), values.size()));
}

TEST_CASE("a malformed int8 gradient is read as a fault that names what is wrong",
          "[wire][int8][serialization]") {
  int8_config cfg;
  caf::actor_system sys{cfg};
  const std::vector<int8_t> four{1, -2, 3, 127};
  // Well formed, to show the crafting is right.
  auto good = read_push(sys, crafted_push(sys, 4, 300, four, {0.5f}));
  REQUIRE(good.gradient.fault.empty());
  CHECK(good.gradient.to_vector() == std::vector<float>{0.5f, -1.0f, 1.5f, 63.5f});
  CHECK(good.gradient.first_parameter() == 300);
  struct malformed {
    std::string what;
    size_t count;
    uint64_t first;
    std::vector<int8_t> values;
    std::vector<float> scales;
    std::string fault;
  };
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<malformed> cases{
    {"short", 4, 300, {1, 2, 3}, {0.5f}, "3 bytes for 4 int8 values"},
    {"long", 4, 300, {1, 2, 3, 4, 5}, {0.5f}, "5 bytes for 4 int8 values"},
    {"no scale", 4, 300, four, {}, "0 scales for 4 int8 values from parameter 300 (1 blocks)"},
    {"a straddle's missing scale", 4, 254, four, {0.5f},
     "1 scales for 4 int8 values from parameter 254 (2 blocks)"},
    {"NaN scale", 4, 300, four, {nan}, "the scale of block 1 is nan, not a finite magnitude"},
    {"Inf scale", 4, 300, four, {inf}, "the scale of block 1 is inf, not a finite magnitude"},
    {"negative scale", 4, 300, four, {-0.5f},
     "the scale of block 1 is -0.500000, not a finite magnitude"},
    {"-128", 4, 300, {1, -128, 3, 4}, {0.5f}, "value 301 is -128, outside [-127, 127]"},
    {"far parameter", 4, uint64_t{1} << 40, four, {0.5f},
     "int8 values from parameter 1099511627776"},
  };
  for (const auto& c : cases) {
    INFO(c.what);
    const auto back = read_push(sys, crafted_push(sys, c.count, c.first, c.values, c.scales));
    CHECK(back.gradient.fault == c.fault);
    CHECK(back.gradient.size() == 0);
    CHECK(back.gradient.codec == float_codec::int8);
    CHECK(back.replica == 4);
    CHECK(back.round == 9);
  }
}

TEST_CASE("an int8 block or scale count beyond the frame's bytes fails unread",
          "[wire][int8][serialization]") {
  int8_config cfg;
  caf::actor_system sys{cfg};
  auto buf = crafted_push(sys, 4, 0, {1, 2, 3, 4}, {0.5f});
  // The trailer: ... values' length (1), 4 values, scales' count (1), 4 bytes.
  REQUIRE(buf[buf.size() - 5] == 1);
  buf[buf.size() - 5] = 100; // 100 scales in 4 bytes
  push_msg back;
  caf::binary_deserializer scales{sys, buf};
  CHECK(scales(back));
  buf[buf.size() - 5] = 1;
  REQUIRE(buf[buf.size() - 10] == 4);
  buf[buf.size() - 10] = 120; // 120 values in 9 bytes
  caf::binary_deserializer values{sys, buf};
  CHECK(values(back));
}
