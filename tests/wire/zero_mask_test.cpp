// Pushes with their zeros as a mask (messages/zero_mask.hpp): fp32 and
// 16-bit gradients come back the same bits, -0, NaN and Inf too, in fewer
// bytes; a view that is not marked, an int8 one or one the mask would not
// shrink travels whole; a malformed mask is read as a fault that names it;
// a mask that would stand for far more floats than its bytes is refused;
// mutated masked frames never crash the reader; and the shuffles write and
// read the portable loops' bytes.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include <caf/all.hpp>

#include "messages/protocol.hpp"
#include "messages/register.hpp"
#include "messages/zero_mask.hpp"

using namespace troupe;
using namespace troupe::detail;

namespace {

struct mask_config : caf::actor_system_config {
  mask_config() { register_messages(*this); }
};

// 1003 values (not a multiple of 8), a third of them +0, with -0, NaN, Inf
// and the last value zero, rounded to `codec`.
std::vector<float> gradient_with_zeros(float_codec codec) {
  std::mt19937 gen(11);
  std::normal_distribution<float> value(0.0f, 1e-3f);
  std::vector<float> g(1003);
  for (size_t i = 0; i < g.size(); ++i)
    g[i] = i % 3 == 0 ? 0.0f : value(gen);
  g[1] = -0.0f;
  g[2] = std::numeric_limits<float>::infinity();
  g[4] = std::numeric_limits<float>::quiet_NaN();
  g.back() = 0.0f;
  round_in_place(codec, g.data(), g.size());
  return g;
}

shared_floats marked(const std::vector<float>& values, float_codec codec) {
  shared_floats view{values};
  view.codec = codec;
  view.masked_zeros = count_zero_floats(values.data(), values.size());
  return view;
}

std::vector<char> written(caf::actor_system& sys, shared_floats view) {
  std::vector<char> buf;
  caf::binary_serializer sink{sys, buf};
  REQUIRE_FALSE(sink(view));
  return buf;
}

shared_floats read_back(caf::actor_system& sys, const std::vector<char>& buf) {
  shared_floats back;
  caf::binary_deserializer source{sys, buf};
  REQUIRE_FALSE(source(back));
  return back;
}

bool same_bits(const shared_floats& view, const std::vector<float>& values) {
  return view.size() == values.size()
         && std::memcmp(view.data(), values.data(), values.size() * sizeof(float)) == 0;
}

// A masked frame written by hand: the form, the count, the mask and the
// values it selects as 32-bit words.
std::vector<char> masked_frame(caf::actor_system& sys, uint8_t form, size_t count,
                               std::vector<uint8_t> mask, std::vector<uint32_t> kept) {
  std::vector<char> buf;
  caf::binary_serializer sink{sys, buf};
  REQUIRE_FALSE(sink(form));
  REQUIRE_FALSE(sink.begin_sequence(count));
  REQUIRE_FALSE(sink(mask));
  REQUIRE_FALSE(sink(kept));
  REQUIRE_FALSE(sink.end_sequence());
  return buf;
}

} // namespace

TEST_CASE("a gradient marked for its zeros travels masked, smaller, and comes back the same "
          "bits for fp32, bf16 and fp16",
          "[wire][mask]") {
  mask_config cfg;
  caf::actor_system sys{cfg};
  for (const auto codec : {float_codec::fp32, float_codec::bf16, float_codec::fp16}) {
    INFO(codec_name(codec));
    const auto values = gradient_with_zeros(codec);
    const auto view = marked(values, codec);
    CHECK(view.masked_zeros == 335); // every i % 3 == 0 (the last value too); -0 is not +0
    const auto masked = written(sys, view);
    shared_floats unmarked = view;
    unmarked.masked_zeros = 0;
    const auto whole = written(sys, unmarked);
    CHECK(static_cast<uint8_t>(masked[0]) == (static_cast<uint8_t>(codec) | zero_mask_form));
    // The zeros' bytes are gone; the mask's 126 bytes and two lengths came.
    CHECK(masked.size() <= whole.size() - 335 * codec_width(codec) + 126 + 4);
    const auto back = read_back(sys, masked);
    CHECK(back.fault.empty());
    CHECK(back.codec == codec);
    CHECK(same_bits(back, values));
    CHECK(same_bits(read_back(sys, whole), values));
  }
}

TEST_CASE("an int8 view, or one whose mask would not shrink it, travels whole", "[wire][mask]") {
  mask_config cfg;
  caf::actor_system sys{cfg};
  std::vector<float> dense(1000, 0.25f);
  dense[7] = 0.0f; // one zero saves 4 bytes, the mask costs 125
  const auto view = marked(dense, float_codec::fp32);
  REQUIRE(view.masked_zeros == 1);
  const auto bytes = written(sys, view);
  CHECK(static_cast<uint8_t>(bytes[0]) == static_cast<uint8_t>(float_codec::fp32));
  CHECK(same_bits(read_back(sys, bytes), dense));
  auto zeros = gradient_with_zeros(float_codec::fp32);
  zeros[2] = 1.0f; // int8 needs finite values
  zeros[4] = 2.0f;
  auto q = shared_floats{zeros}.rounded(float_codec::int8);
  q.masked_zeros = count_zero_floats(q.data(), q.size());
  REQUIRE(q.masked_zeros > 0);
  const auto int8_bytes = written(sys, q);
  CHECK(static_cast<uint8_t>(int8_bytes[0]) == static_cast<uint8_t>(float_codec::int8));
  CHECK(same_bits(read_back(sys, int8_bytes), q.to_vector()));
}

TEST_CASE("a malformed zero mask is read as a fault that names it, and int8 is never masked",
          "[wire][mask]") {
  mask_config cfg;
  caf::actor_system sys{cfg};
  const auto form = static_cast<uint8_t>(zero_mask_form); // fp32, masked
  auto fault_of = [&](const std::vector<char>& frame) { return read_back(sys, frame).fault; };
  // 10 values: a mask of 2 bytes selecting 3 of them.
  CHECK(fault_of(masked_frame(sys, form, 10, {0x07, 0x00}, {1, 2, 3})).empty());
  CHECK_THAT(fault_of(masked_frame(sys, form, 10, {0x07}, {1, 2, 3})),
             Catch::Contains("a zero mask of 1 bytes and 3 values for 10 fp32 values"));
  CHECK_THAT(fault_of(masked_frame(sys, form, 10, {0x07, 0x04}, {1, 2, 3})),
             Catch::Contains("bits set past its 10 values"));
  CHECK_THAT(fault_of(masked_frame(sys, form, 10, {0x07, 0x00}, {1, 2})),
             Catch::Contains("selects 3 values of 2"));
  // Eight million floats from a mask of a MB and no values: over the bound
  // of floats a frame's bytes may stand for, refused before they are made.
  const size_t many = 8u << 20;
  CHECK_THAT(fault_of(masked_frame(sys, form, many, std::vector<uint8_t>(many / 8), {})),
             Catch::Contains("a zero mask of 1048576 bytes and 0 values for 8388608"));
  shared_floats back;
  const auto int8_masked = masked_frame(
    sys, static_cast<uint8_t>(zero_mask_form | static_cast<uint8_t>(float_codec::int8)), 10,
    {0x07, 0x00}, {1, 2, 3});
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
      auto bytes = valid;
      for (int k = 1 + static_cast<int>(random() % 6); k > 0; --k)
        bytes[random() % bytes.size()] = static_cast<char>(random());
      if (random() % 8 == 0)
        bytes.resize(random() % bytes.size());
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
      words[i] = (i / 64) % 3 == 0 || gen() % 5 == 0 ? 0u : (gen() % 7 == 0 ? 0x80000000u : gen() | 1u);
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
