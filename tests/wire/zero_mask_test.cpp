// Pushes with their zeros as a mask and fp32 exponents apart
// (messages/masked_floats.hpp): fp32 and 16-bit gradients come back the same
// bits, -0, subnormals, NaN and Inf too, in fewer bytes; an int8 view or one
// the coding would not shrink travels whole; each kind of malformed block is
// read as a fault that names it; a mask that would stand for far more floats
// than its bytes is refused;
// mutated masked frames never crash the reader; and the shuffles and the
// exponents eight at a time write and read the portable loops' bytes.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <limits>
#include <random>
#include <vector>

#include <caf/all.hpp>

#include "messages/protocol.hpp"
#include "messages/register.hpp"
#include "messages/exponent_split.hpp"
#include "messages/masked_floats.hpp"
#include "messages/zero_mask.hpp"
#include "tests/actors/serial_roundtrip.hpp"
#include "tests/wire/scrambled.hpp"

using namespace troupe;
using namespace troupe::detail;

namespace {

struct mask_config : caf::actor_system_config {
  mask_config() { register_messages(*this); }
};

// 1003 values (not a multiple of 8), a third of them +0 (the last too),
// with -0, a tiny value and a subnormal (exponents 15 or more below the
// largest), and with `specials` Inf and NaN; rounded to `codec`.
std::vector<float> gradient_with_zeros(float_codec codec, bool specials = false) {
  std::mt19937 gen(11);
  std::normal_distribution<float> value(0.0f, 1e-3f);
  std::vector<float> g(1003);
  for (size_t i = 0; i < g.size(); ++i)
    g[i] = i % 3 == 0 ? 0.0f : value(gen);
  g[1] = -0.0f;
  g[2] = 1e-30f;
  g[4] = 1e-40f;
  if (specials) {
    g[5] = std::numeric_limits<float>::infinity();
    g[7] = std::numeric_limits<float>::quiet_NaN();
  }
  round_in_place(codec, g.data(), g.size());
  return g;
}

// A view coded with its zeros as a mask, where that is smaller.
shared_floats marked(const std::vector<float>& values, float_codec codec) {
  shared_floats view{values};
  view.codec = codec;
  if (auto m = mask_floats(codec, values.data(), values.size()))
    view.masked = std::make_shared<const masked_floats>(std::move(*m));
  return view;
}

std::vector<char> written(caf::actor_system& sys, shared_floats view) {
  return testing::serialize(sys, view);
}

shared_floats read_back(caf::actor_system& sys, const std::vector<char>& buf) {
  return testing::deserialize<shared_floats>(sys, buf);
}

bool same_bits(const shared_floats& view, const std::vector<float>& values) {
  return view.size() == values.size()
         && std::memcmp(view.data(), values.data(), values.size() * sizeof(float)) == 0;
}

// A masked fp32 view written by hand: the form, the count, then the blocks.
std::vector<char> masked_frame(caf::actor_system& sys, uint8_t form, size_t count,
                               const masked_floats& m) {
  std::vector<char> buf;
  caf::binary_serializer sink{sys, buf};
  REQUIRE_FALSE(sink(form));
  REQUIRE_FALSE(sink.begin_sequence(count));
  REQUIRE_FALSE(write_masked(sink, m));
  REQUIRE_FALSE(sink.end_sequence());
  return buf;
}

// 10 fp32 values, the first three kept: exponents 127, 126 and 125 (the
// largest 127), mantissas 1, 2 and 3, the second negative.
masked_floats three_of_ten() {
  masked_floats m;
  m.count = 10;
  m.mask = {0x07, 0x00};
  m.kept = 3;
  m.base = 127;
  m.exponents = {0x10, 0x02};
  m.lows = {1, 0, 0, 2, 0, 0x80, 3, 0, 0};
  return m;
}

} // namespace

TEST_CASE("a gradient coded with its zeros as a mask travels so, smaller, and comes back the "
          "same bits for fp32, bf16 and fp16",
          "[wire][mask]") {
  mask_config cfg;
  caf::actor_system sys{cfg};
  for (const auto codec : {float_codec::fp32, float_codec::bf16, float_codec::fp16}) {
    INFO(codec_name(codec));
    const auto values = gradient_with_zeros(codec);
    const auto view = marked(values, codec);
    REQUIRE(view.masked);
    // Every i % 3 == 0 is zero (and in fp16 1e-30 and 1e-40); -0 is not +0.
    std::vector<uint32_t> kept;
    for (const float x : values) {
      uint32_t bits = 0;
      std::memcpy(&bits, &x, sizeof bits);
      if (bits != 0)
        kept.push_back(bits);
    }
    CHECK(view.masked->kept == (codec == float_codec::fp16 ? 666 : 668));
    CHECK(view.masked->kept == kept.size());
    const auto masked = written(sys, view);
    const auto whole = written(sys, shared_floats{values}.rounded(codec));
    CHECK(static_cast<uint8_t>(masked[0]) == (static_cast<uint8_t>(codec) | zero_mask_form));
    CHECK(masked.size() < whole.size());
    if (codec == float_codec::fp32) {
      // 3.5 bytes a value, and a byte for each exponent 15 or more below the
      // largest (1e-30 and 1e-40 among them).
      uint32_t largest = 0;
      for (const uint32_t bits : kept)
        largest = std::max(largest, (bits >> 23) & 0xFFu);
      const auto escaped = std::count_if(kept.begin(), kept.end(), [&](uint32_t bits) {
        return largest - ((bits >> 23) & 0xFFu) >= 15;
      });
      CHECK(escaped >= 2);
      CHECK(view.masked->escapes.size() == static_cast<size_t>(escaped));
      CHECK(view.masked->wire_bytes() == 126 + 1 + 334 + 3 * 668 + view.masked->escapes.size());
    }
    const auto back = read_back(sys, masked);
    CHECK(back.fault.empty());
    CHECK(back.codec == codec);
    CHECK(same_bits(back, values));
    // Inf and NaN make every exponent escape: the values travel whole, or
    // masked where still smaller, the same bits either way.
    const auto special = gradient_with_zeros(codec, true);
    CHECK(same_bits(read_back(sys, written(sys, marked(special, codec))), special));
  }
}

TEST_CASE("an int8 view, or one the mask would not shrink, travels whole", "[wire][mask]") {
  std::vector<float> dense(1000, 0.25f);
  dense[7] = 0.0f; // one zero saves 2 bytes of bf16, the mask costs 125
  round_in_place(float_codec::bf16, dense.data(), dense.size());
  CHECK_FALSE(mask_floats(float_codec::bf16, dense.data(), dense.size()));
  // fp32 exponents spread over 200 values: most escape, 4.5 bytes a value.
  std::vector<float> spread(1000);
  for (size_t i = 0; i < spread.size(); ++i)
    spread[i] = std::ldexp(1.0f, static_cast<int>(i % 200) - 100);
  CHECK_FALSE(mask_floats(float_codec::fp32, spread.data(), spread.size()));
  // The same values with their exponents close: 3.5 bytes and the mask's.
  std::vector<float> close(1000, 0.25f);
  const auto coded = mask_floats(float_codec::fp32, close.data(), close.size());
  REQUIRE(coded);
  CHECK(coded->wire_bytes() == 125 + 1 + 500 + 3000);
  CHECK_FALSE(mask_floats(float_codec::int8, close.data(), close.size()));
}

TEST_CASE("a malformed masked view is read as a fault that names it, and int8 is never masked",
          "[wire][mask]") {
  mask_config cfg;
  caf::actor_system sys{cfg};
  const auto fp32 = static_cast<uint8_t>(zero_mask_form);
  auto fault_of = [&](size_t count, const masked_floats& m) {
    return read_back(sys, masked_frame(sys, fp32, count, m)).fault;
  };
  const auto good = read_back(sys, masked_frame(sys, fp32, 10, three_of_ten()));
  REQUIRE(good.fault.empty());
  REQUIRE(good.size() == 10);
  CHECK(good.data()[0] == 1.0f + std::ldexp(1.0f, -23));
  CHECK(good.data()[1] == -(0.5f + std::ldexp(2.0f, -24)));
  CHECK(good.data()[2] == 0.25f + std::ldexp(3.0f, -25));
  CHECK(good.data()[3] == 0.0f);
  auto with = [](auto change) {
    auto m = three_of_ten();
    change(m);
    return m;
  };
  CHECK_THAT(fault_of(10, with([](masked_floats& m) { m.mask = {0x07}; })),
             Catch::Contains("a zero mask of 1 bytes for 10 values"));
  CHECK_THAT(fault_of(10, with([](masked_floats& m) { m.mask[1] = 0x04; })),
             Catch::Contains("bits set past its 10 values"));
  CHECK_THAT(fault_of(10, with([](masked_floats& m) { m.mask[0] = 0x03; })),
             Catch::Contains("a zero mask that selects 2 values of 3"));
  CHECK_THAT(fault_of(10, with([](masked_floats& m) { m.kept = 20; })),
             Catch::Contains("20 values kept of 10"));
  CHECK_THAT(fault_of(10, with([](masked_floats& m) { m.exponents = {0x10}; })),
             Catch::Contains("1 bytes of exponents and 9 of mantissas for 3 fp32 values"));
  CHECK_THAT(fault_of(10, with([](masked_floats& m) { m.exponents[1] = 0x12; })),
             Catch::Contains("bytes of exponents")); // a 4th exponent for 3 values
  CHECK_THAT(fault_of(10, with([](masked_floats& m) { m.base = 1; })),
             Catch::Contains("an exponent 2 below the largest, 1"));
  CHECK_THAT(fault_of(10, with([](masked_floats& m) { m.exponents[1] = 0x0F; })),
             Catch::Contains("more escaped exponents than the 0 sent"));
  CHECK_THAT(fault_of(10, with([](masked_floats& m) { m.escapes = {7}; })),
             Catch::Contains("1 escaped exponents for 0"));
  // Eight million floats from a mask of a MB and no values: over the bound
  // of floats a frame's bytes may stand for, refused before they are made.
  const size_t many = 8u << 20;
  masked_floats none;
  none.mask.assign(many / 8, 0);
  CHECK_THAT(fault_of(many, none), Catch::Contains("bytes for 8388608 values, over 8"));
  masked_floats bf16;
  bf16.codec = float_codec::bf16;
  bf16.mask = {0x07, 0x00};
  bf16.words = {1, 2};
  CHECK_THAT(read_back(sys, masked_frame(sys, fp32 | 1, 10, bf16)).fault,
             Catch::Contains("selects 3 values of 2"));
  shared_floats back;
  const auto int8_masked = masked_frame(
    sys, static_cast<uint8_t>(zero_mask_form | static_cast<uint8_t>(float_codec::int8)), 10,
    three_of_ten());
  caf::binary_deserializer source{sys, int8_masked};
  const auto err = source(back);
  REQUIRE(err);
  CHECK_THAT(sys.render(err), Catch::Contains("a float buffer in format 131"));
}

TEST_CASE("mutated masked frames are refused as they are read, or read as a fault or as "
          "values of their count",
          "[wire][mask][fuzz]") {
  mask_config cfg;
  caf::actor_system sys{cfg};
  std::mt19937_64 random{20261205};
  for (const auto codec : {float_codec::fp32, float_codec::bf16}) {
    INFO(codec_name(codec));
    const auto valid = written(sys, marked(gradient_with_zeros(codec), codec));
    size_t unread = 0, faults = 0, read = 0;
    for (int trial = 0; trial < 3000; ++trial) {
      const auto bytes = wire_test::scrambled(valid, random);
      shared_floats back;
      caf::binary_deserializer source{sys, bytes};
      if (source(back)) {
        ++unread;
      } else if (!back.fault.empty()) {
        ++faults;
        REQUIRE(back.size() == 0);
      } else {
        ++read;
        REQUIRE((back.size() == 0 || back.data() != nullptr));
      }
    }
    INFO(unread << " unread, " << faults << " faults, " << read << " read");
    CHECK(unread > 0);
    CHECK(faults > 0);
    CHECK(read > 0);
  }
}

TEST_CASE("the shuffles mask and spread the portable loops' bytes", "[wire][mask]") {
  std::mt19937 gen(5);
  for (const size_t count : {size_t{0}, size_t{7}, size_t{8}, size_t{1003}, size_t{4096}}) {
    INFO(count);
    // Runs of zeros and scattered ones, -0 among the values.
    std::vector<uint32_t> words(count);
    for (size_t i = 0; i < count; ++i)
      words[i] = (i / 64) % 3 == 0 || gen() % 5 == 0 ? 0u
                 : gen() % 7 == 0                   ? 0x80000000u
                                                    : gen() | 1u;
    auto expect_same = [&](auto word) {
      using Word = decltype(word);
      std::vector<Word> in(count);
      for (size_t i = 0; i < count; ++i)
        in[i] = static_cast<Word>(words[i] >> (32 - 8 * sizeof(Word)));
      std::vector<uint8_t> mask((count + 7) / 8, 0xAA), portable_mask = mask;
      std::vector<Word> kept(count + 1), portable_kept(count + 1);
      const size_t n = mask_zeros(in.data(), count, mask.data(), kept.data());
      REQUIRE(n == mask_zeros_portable(in.data(), count, portable_mask.data(),
                                       portable_kept.data()));
      CHECK(mask == portable_mask);
      CHECK(std::equal(kept.begin(), kept.begin() + static_cast<long>(n), portable_kept.begin()));
      kept.resize(n); // nothing past the kept words to read
      std::vector<Word> out(count, Word{1}), portable_out(count, Word{1});
      REQUIRE(unmask_zeros(mask.data(), mask.size(), count, kept.data(), n, out.data()).empty());
      REQUIRE(unmask_zeros_portable(mask.data(), mask.size(), count, kept.data(), n,
                                    portable_out.data())
                .empty());
      CHECK(out == in);
      CHECK(portable_out == in);
    };
    expect_same(uint32_t{});
    expect_same(uint16_t{});
  }
}

TEST_CASE("fp32 exponents split and join eight at a time as the portable loops do",
          "[wire][mask]") {
  std::mt19937 gen(9);
  for (const size_t n : {size_t{1}, size_t{8}, size_t{9}, size_t{17}, size_t{1001}}) {
    for (const uint32_t top : {3u, 140u}) { // a largest exponent below 15 too
      INFO(n << " values, largest exponent " << top);
      std::vector<uint32_t> words(n);
      for (size_t j = 0; j < n; ++j) {
        const uint32_t below = gen() % 10 == 0 ? 15 + gen() % 20 : gen() % 15;
        const uint32_t exponent = below > top ? 0 : top - below;
        words[j] = (gen() & 0x807FFFFFu) | exponent << 23;
      }
      words[0] = (words[0] & 0x807FFFFFu) | top << 23;
      REQUIRE(largest_exponent(words.data(), n) == top);
      const auto base = static_cast<uint8_t>(top);
      std::vector<uint8_t> nibbles((n + 1) / 2), lows(3 * n + split_spare_bytes), escapes;
      std::vector<uint8_t> portable_nibbles = nibbles, portable_lows = lows, portable_escapes;
      split_exponents(words.data(), n, base, nibbles.data(), lows.data(), escapes);
      split_exponents_portable(words.data(), n, base, portable_nibbles.data(),
                               portable_lows.data(), portable_escapes);
      CHECK(nibbles == portable_nibbles);
      CHECK(std::equal(lows.begin(), lows.begin() + static_cast<long>(3 * n),
                       portable_lows.begin()));
      CHECK(escapes == portable_escapes);
      lows.resize(3 * n); // nothing past the mantissas to read
      std::vector<uint32_t> back(n), portable_back(n);
      REQUIRE(join_exponents(nibbles.data(), lows.data(), n, base, escapes, back.data()).empty());
      REQUIRE(join_exponents_portable(nibbles.data(), lows.data(), n, base, escapes,
                                      portable_back.data())
                .empty());
      CHECK(back == words);
      CHECK(portable_back == words);
    }
  }
}
