// Answers coded against the version a replica holds: every codec's values
// come back the same bits, from one optimizer-sized step and from bits that
// change sign, exponent or all at once; a code that would not be smaller is
// not made; a malformed one is named and leaves the values as they were;
// the frame bounds what a delta claims before anything is allocated; and the
// shuffles four values at a time write and read the portable loops' bytes;
// and mutated coded answers are refused, or apply as values of the codec.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include <caf/all.hpp>

#include "messages/answer_delta.hpp"
#include "messages/delta_kernels.hpp"
#include "messages/protocol.hpp"
#include "messages/register.hpp"
#include "tests/wire/scrambled.hpp"

using namespace troupe;
using namespace troupe::detail;

namespace {

struct delta_config : caf::actor_system_config {
  delta_config() { register_messages(*this); }
};

// Parameters as a layer's initialization draws them, and the same after one
// step of about the learning rate each, rounded to `codec`; 1001 values (not
// a multiple of 4), with a few that change sign, jump in exponent, stay, or
// hold Inf and NaN.
struct two_versions {
  std::vector<float> before;
  std::vector<float> after;
};

two_versions stepped(float_codec codec) {
  std::mt19937 gen(42);
  std::normal_distribution<float> init(0.0f, 0.05f);
  std::normal_distribution<float> step(0.0f, 1e-3f);
  two_versions v;
  for (size_t i = 0; i < 1001; ++i) {
    v.before.push_back(init(gen));
    v.after.push_back(v.before.back() + step(gen));
  }
  v.after[3] = -v.before[3];
  v.after[10] = v.before[10] * 1024.0f;
  v.after[11] = v.before[11];
  v.after[12] = std::numeric_limits<float>::infinity();
  v.before[13] = std::numeric_limits<float>::quiet_NaN();
  round_in_place(codec, v.before.data(), v.before.size());
  round_in_place(codec, v.after.data(), v.after.size());
  return v;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

answer_delta with_bytes(answer_delta delta, std::vector<uint8_t> bytes) {
  delta.bytes = std::make_shared<const std::vector<uint8_t>>(std::move(bytes));
  return delta;
}

} // namespace

TEST_CASE("a coded answer gives the replica the very bits of the answer whole, smaller",
          "[wire][delta]") {
  for (auto codec : {float_codec::fp32, float_codec::bf16, float_codec::fp16}) {
    INFO(codec_name(codec));
    const auto v = stepped(codec);
    const auto delta = code_delta(codec, v.before.data(), v.after.data(), v.after.size(), 7);
    REQUIRE(delta);
    CHECK(delta->base_version == 7);
    CHECK(delta->count == v.after.size());
    CHECK(delta->size_in_bytes() < v.after.size() * codec_width(codec));
    auto values = v.before;
    CHECK(apply_delta(*delta, values.data(), values.size()).empty());
    CHECK(same_bits(values, v.after));
  }
}

TEST_CASE("no code is made where it would not be smaller than the values whole",
          "[wire][delta]") {
  std::vector<float> before(64, 1.0f);
  std::vector<float> after(64, -3.0e-30f); // every bit pattern far from the base's
  CHECK_FALSE(code_delta(float_codec::fp32, before.data(), after.data(), 64, 1));
  CHECK_FALSE(code_delta(float_codec::int8, before.data(), before.data(), 64, 1));
  CHECK_FALSE(code_delta(float_codec::fp32, before.data(), before.data(), 0, 1));
}

TEST_CASE("a malformed delta is named and leaves the values as they were", "[wire][delta]") {
  const auto v = stepped(float_codec::bf16);
  const auto good = code_delta(float_codec::bf16, v.before.data(), v.after.data(),
                               v.after.size(), 7);
  REQUIRE(good);
  const auto& bytes = *good->bytes;
  auto expect_refused = [&](const answer_delta& delta, size_t count, const std::string& words) {
    auto values = v.before;
    const auto fault = apply_delta(delta, values.data(), count);
    CHECK_THAT(fault, Catch::Contains(words));
    CHECK(same_bits(values, v.before));
  };
  expect_refused(*good, v.before.size() - 1, "a delta of 1001 values for a slice of 1000");
  expect_refused(with_bytes(*good, {bytes.begin(), bytes.begin() + 10}), v.before.size(),
                 "bytes for the tags of 1001 values");
  auto longer = bytes;
  longer.push_back(0);
  expect_refused(with_bytes(*good, longer), v.before.size(), "where the tags call for");
  auto shorter = bytes;
  shorter.pop_back();
  expect_refused(with_bytes(*good, shorter), v.before.size(), "where the tags call for");
  auto tag3 = bytes;
  tag3[0] = 0xFF; // tag 3: no bf16 value has it
  expect_refused(with_bytes(*good, tag3), v.before.size(), "a tag no bf16 value has");
  auto past_end = bytes;
  past_end[250] |= 0x0C; // value 1001 of 1001..1003, which does not exist
  expect_refused(with_bytes(*good, past_end), v.before.size(), "a tag no bf16 value has");
}

TEST_CASE("an answer's delta travels in a message and is bounded by its frame",
          "[wire][delta][serialization]") {
  delta_config cfg;
  caf::actor_system sys{cfg};
  const auto v = stepped(float_codec::fp32);
  params_msg answer;
  answer.version = 8;
  answer.delta = *code_delta(float_codec::fp32, v.before.data(), v.after.data(),
                             v.after.size(), 7);
  std::vector<char> buf;
  caf::binary_serializer sink{sys, buf};
  REQUIRE_FALSE(sink(answer));
  params_msg read;
  caf::binary_deserializer source{sys, buf};
  REQUIRE_FALSE(source(read));
  CHECK(read.delta.base_version == 7);
  CHECK(read.delta.codec == float_codec::fp32);
  CHECK(*read.delta.bytes == *answer.delta.bytes);
  CHECK(read.values.size() == 0);

  // The same frame cut short, and one whose delta claims more values than
  // its bytes could tag: both refused while reading.
  params_msg cut;
  caf::binary_deserializer short_source{sys, buf.data(), buf.size() - 100};
  CHECK(short_source(cut));
  answer_delta claim;
  claim.count = 1000;
  claim.bytes = std::make_shared<const std::vector<uint8_t>>(10, uint8_t{0});
  std::vector<char> claimed;
  caf::binary_serializer claim_sink{sys, claimed};
  REQUIRE_FALSE(claim_sink(claim));
  answer_delta back;
  caf::binary_deserializer claim_source{sys, claimed};
  const auto err = claim_source(back);
  REQUIRE(err);
  CHECK_THAT(sys.render(err), Catch::Contains("a delta of 1000 values in 10 bytes"));
  CHECK_FALSE(back);
}

TEST_CASE("the kernels four values at a time code and apply as the portable loops do",
          "[wire][delta]") {
  // XORs of every width, zeros among them, over a count that is not a
  // multiple of 4: 32-bit ones, and 16-bit ones in the words' low halves.
  std::mt19937 gen(7);
  for (const bool fp32 : {true, false}) {
    INFO(fp32);
    std::vector<uint32_t> xors(1003);
    for (auto& x : xors) {
      const uint32_t bits = gen() % (fp32 ? 33 : 17);
      x = bits == 0 ? 0 : static_cast<uint32_t>(gen()) >> (32 - bits) | (1u << (bits - 1));
    }
    const size_t size = delta_tag_bytes(xors.size()) + 4 * xors.size() + delta_spare_bytes;
    std::vector<uint8_t> fast(size, 0);
    std::vector<uint8_t> portable(size, 0);
    const size_t tags = delta_tag_bytes(xors.size());
    uint8_t* fast_end = code_xors(xors.data(), xors.size(), fp32, fast.data(), fast.data() + tags);
    uint8_t* portable_end = code_xors_portable(xors.data(), xors.size(), fp32, portable.data(),
                                               portable.data() + tags);
    const auto used = static_cast<size_t>(portable_end - portable.data());
    REQUIRE(static_cast<size_t>(fast_end - fast.data()) == used);
    CHECK(std::memcmp(fast.data(), portable.data(), used) == 0);
    REQUIRE(delta_payload_length(portable.data(), xors.size(), fp32) == used - tags);
    for (const uint32_t shift : {0u, 16u}) {
      if (fp32 && shift != 0)
        continue;
      std::vector<uint32_t> words(xors.size(), 0x12345678u);
      auto portable_words = words;
      const uint8_t* end = portable.data() + used;
      CHECK(apply_xors(portable.data(), xors.size(), fp32, portable.data() + tags, end, shift,
                       words.data()) == end);
      CHECK(apply_xors_portable(portable.data(), xors.size(), fp32, portable.data() + tags, end,
                                shift, portable_words.data()) == end);
      CHECK(words == portable_words);
      for (size_t i = 0; i < xors.size(); ++i)
        REQUIRE((words[i] ^ 0x12345678u) == xors[i] << shift);
    }
  }
}

TEST_CASE("mutated coded answers are refused as they are read or applied, or apply whole",
          "[wire][delta][fuzz]") {
  delta_config cfg;
  caf::actor_system sys{cfg};
  std::mt19937_64 random{20261205};
  for (const auto codec : {float_codec::fp32, float_codec::bf16}) {
    INFO(static_cast<int>(codec));
    const auto v = stepped(codec);
    params_msg answer;
    answer.version = 8;
    answer.delta = *code_delta(codec, v.before.data(), v.after.data(), v.after.size(), 7);
    std::vector<char> valid;
    caf::binary_serializer sink{sys, valid};
    REQUIRE_FALSE(sink(answer));
    size_t unread = 0, refused = 0, applied = 0;
    for (int trial = 0; trial < 3000; ++trial) {
      const auto bytes = wire_test::scrambled(valid, random);
      params_msg read;
      caf::binary_deserializer source{sys, bytes};
      if (source(read) || !read.delta) {
        ++unread;
        continue;
      }
      auto values = v.before;
      if (!apply_delta(read.delta, values.data(), values.size()).empty()) {
        ++refused;
        REQUIRE(same_bits(values, v.before)); // a refusal changes nothing
        continue;
      }
      ++applied;
      // What was applied is a value of the codec, and codes back to itself.
      auto again = v.before;
      if (const auto code = code_delta(codec, v.before.data(), values.data(), values.size(), 7))
        REQUIRE(apply_delta(*code, again.data(), again.size()).empty());
      else
        again = values;
      REQUIRE(same_bits(again, values));
      if (codec == float_codec::bf16)
        REQUIRE(std::all_of(values.begin(), values.end(), [](float x) {
          uint32_t bits = 0;
          std::memcpy(&bits, &x, sizeof bits);
          return (bits & 0xFFFFu) == 0;
        }));
    }
    INFO(unread << " unread, " << refused << " refused, " << applied << " applied");
    CHECK(unread > 0);
    CHECK(refused > 0);
    CHECK(applied > 0);
  }
}
