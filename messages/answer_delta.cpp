// Coding a shard's answer against the version the replica holds: XOR of the
// wire bits, each value's significant low bytes behind a 2-bit tag.
#include "messages/answer_delta.hpp"

#include <algorithm>
#include <cstring>

#include <caf/sec.hpp>

#include "messages/shared_floats.hpp"

namespace troupe::detail {

// A value's low bytes are its first in memory: copies of whole words then
// write and read them.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "coded answers need a little-endian host");

namespace {

// A value's tag says how many of its XOR's low bytes travel: fp32 0, 2, 3 or
// 4 (a 1-byte XOR, the rarest, goes as 2); bf16 and fp16 0, 1 or 2, and no
// tag 3. Widths come by arithmetic, not a table: the next value's place
// waits for them.
uint32_t fp32_width(uint32_t x) {
  return 2u * (x != 0) + (x >= (1u << 16)) + (x >= (1u << 24));
}
uint32_t half_width(uint32_t x) { return (x != 0) + (x >= (1u << 8)); }
uint32_t fp32_tag_width(uint32_t tag) { return tag + (tag != 0); }
uint32_t fp32_width_tag(uint32_t width) { return width - (width != 0); }

constexpr uint32_t width_masks[5] = {0, 0xFFu, 0xFFFFu, 0xFFFFFFu, 0xFFFFFFFFu};

size_t tag_bytes(size_t count) { return (count + 3) / 4; }

// Values are coded a block at a time, as their wire bits: the floats' own,
// or their 16-bit values (a bf16's are its float's high half: the values
// are rounded already).
constexpr size_t block = 256;

void wire_bits(float_codec codec, const float* values, size_t count, uint32_t* bits) {
  std::memcpy(bits, values, count * sizeof(float));
  if (codec == float_codec::bf16) {
    for (size_t i = 0; i < count; ++i)
      bits[i] >>= 16;
  } else if (codec == float_codec::fp16) {
    uint16_t half[block];
    encode_16(codec, values, count, half);
    for (size_t i = 0; i < count; ++i)
      bits[i] = half[i];
  }
}

void put_floats(float_codec codec, uint32_t* bits, size_t count, float* values) {
  if (codec == float_codec::fp16) {
    uint16_t half[block];
    for (size_t i = 0; i < count; ++i)
      half[i] = static_cast<uint16_t>(bits[i]);
    decode_16(codec, half, count, values);
    return;
  }
  if (codec == float_codec::bf16)
    for (size_t i = 0; i < count; ++i)
      bits[i] <<= 16;
  std::memcpy(values, bits, count * sizeof(float));
}

// The bytes the four values of each tag byte take, by tag byte; 0xFF for
// one with a tag 3 of a 16-bit codec.
struct group_lengths {
  uint8_t fp32[256];
  uint8_t half[256];
  group_lengths() {
    for (uint32_t four = 0; four < 256; ++four) {
      uint32_t wide = 0;
      uint32_t narrow = 0;
      for (uint32_t j = 0; j < 4; ++j) {
        const uint32_t tag = (four >> (2 * j)) & 3u;
        wide += fp32_tag_width(tag);
        narrow = (tag == 3 || narrow == 0xFF) ? 0xFF : narrow + tag;
      }
      fp32[four] = static_cast<uint8_t>(wide);
      half[four] = static_cast<uint8_t>(narrow);
    }
  }
};

// The payload's length the tags of `count` values call for, or nothing for
// a tag 3 of a 16-bit codec or a tag past the last value that is not 0.
std::optional<size_t> payload_length(const uint8_t* tags, size_t count, bool fp32) {
  static const group_lengths lengths;
  const uint8_t* table = fp32 ? lengths.fp32 : lengths.half;
  const size_t groups = tag_bytes(count);
  size_t length = 0;
  bool bad = false;
  for (size_t g = 0; g < groups; ++g) {
    bad |= table[tags[g]] == 0xFF;
    length += table[tags[g]];
  }
  const size_t rest = count % 4;
  if (rest != 0 && (tags[groups - 1] >> (2 * rest)) != 0)
    bad = true;
  if (bad)
    return std::nullopt;
  return length;
}

// Codes one block of XORs (`count` a multiple of 4 but at the data's end):
// their tags from value `first` on, their bytes at `out` (which has 3 bytes
// to spare past the last); returns the end of the bytes.
uint8_t* code_block(const uint32_t* x, size_t count, size_t first, bool fp32, uint8_t* tags,
                    uint8_t* out) {
  for (size_t i = 0; i < count; i += 4) {
    uint32_t four = 0;
    for (size_t j = 0; j < 4 && i + j < count; ++j) {
      const uint32_t width = fp32 ? fp32_width(x[i + j]) : half_width(x[i + j]);
      four |= (fp32 ? fp32_width_tag(width) : width) << (2 * j);
      std::memcpy(out, &x[i + j], sizeof(uint32_t));
      out += width;
    }
    tags[(first + i) / 4] = static_cast<uint8_t>(four);
  }
  return out;
}

// Reads a value's XOR of `width` bytes at `at`, as a whole word (masked)
// where 4 bytes are left before `end`.
uint32_t read_xor(const uint8_t* at, uint32_t width, const uint8_t* end) {
  uint32_t x = 0;
  if (end - at >= 4) {
    std::memcpy(&x, at, sizeof(uint32_t));
    return x & width_masks[width];
  }
  for (uint32_t b = 0; b < width; ++b)
    x |= static_cast<uint32_t>(at[b]) << (8 * b);
  return x;
}

// Applies the XORs of values [first, first + count) from `next` to the bits
// at `words` (a float's, whose high half a bf16's are: `shift` 16) and
// returns where the next value's bytes start. The four values of a tag
// byte are read at once: their places come from the tags alone.
const uint8_t* apply_words(const uint8_t* tags, size_t first, size_t count, bool fp32,
                           const uint8_t* next, const uint8_t* end, uint32_t shift,
                           uint32_t* words) {
  for (size_t i = 0; i < count; i += 4) {
    const uint32_t four = tags[(first + i) / 4];
    const size_t group = std::min<size_t>(4, count - i);
    const uint8_t* at[4];
    uint32_t width[4];
    for (size_t j = 0; j < 4; ++j) {
      const uint32_t tag = (four >> (2 * j)) & 3u;
      width[j] = fp32 ? fp32_tag_width(tag) : tag;
      at[j] = next;
      next += j < group ? width[j] : 0;
    }
    for (size_t j = 0; j < group; ++j)
      words[i + j] ^= read_xor(at[j], width[j], end) << shift;
  }
  return next;
}

} // namespace

std::optional<answer_delta> code_delta(float_codec codec, const float* base, const float* now,
                                       size_t count, uint64_t base_version) {
  if (count == 0 || !(codec == float_codec::fp32 || codec == float_codec::bf16
                      || codec == float_codec::fp16))
    return std::nullopt;
  const bool fp32 = codec == float_codec::fp32;
  const size_t whole = count * codec_width(codec);
  const size_t tags = tag_bytes(count);
  // Room for every value at its widest, and the last store's spare bytes.
  auto bytes = std::make_shared<std::vector<uint8_t>>(tags + count * 4 + 4, uint8_t{0});
  uint8_t* out = bytes->data() + tags;
  uint32_t before[block];
  uint32_t after[block];
  for (size_t first = 0; first < count; first += block) {
    const size_t n = std::min(block, count - first);
    wire_bits(codec, base + first, n, before);
    wire_bits(codec, now + first, n, after);
    for (size_t i = 0; i < n; ++i)
      after[i] ^= before[i];
    out = code_block(after, n, first, fp32, bytes->data(), out);
    if (static_cast<size_t>(out - bytes->data()) >= whole)
      return std::nullopt;
  }
  bytes->resize(static_cast<size_t>(out - bytes->data()));
  answer_delta delta;
  delta.base_version = base_version;
  delta.count = count;
  delta.codec = codec;
  delta.bytes = std::move(bytes);
  return delta;
}

std::string apply_delta(const answer_delta& delta, float* values, size_t count) {
  if (delta.count != count)
    return "a delta of " + std::to_string(delta.count) + " values for a slice of "
           + std::to_string(count);
  const size_t tags = tag_bytes(count);
  const size_t size = delta.size_in_bytes();
  if (size < tags)
    return std::to_string(size) + " bytes for the tags of " + std::to_string(count) + " values";
  const uint8_t* data = delta.bytes->data();
  const bool fp32 = delta.codec == float_codec::fp32;
  const auto length = payload_length(data, count, fp32);
  if (!length)
    return std::string("a tag no ") + codec_name(delta.codec) + " value has";
  if (*length != size - tags)
    return std::to_string(size - tags) + " bytes of values where the tags call for "
           + std::to_string(*length);
  const uint8_t* next = data + tags;
  // Blocks of the floats' own bits, or their 16-bit values (a bf16's are
  // its float's high half).
  const uint32_t shift = delta.codec == float_codec::bf16 ? 16 : 0;
  uint32_t bits[block];
  for (size_t first = 0; first < count; first += block) {
    const size_t n = std::min(block, count - first);
    if (delta.codec == float_codec::fp16)
      wire_bits(delta.codec, values + first, n, bits);
    else
      std::memcpy(bits, values + first, n * sizeof(float));
    next = apply_words(data, first, n, fp32, next, data + size, shift, bits);
    if (delta.codec == float_codec::fp16)
      put_floats(delta.codec, bits, n, values + first);
    else
      std::memcpy(values + first, bits, n * sizeof(float));
  }
  return {};
}

caf::error inspect(caf::serializer& sink, answer_delta& x) {
  if (auto err = sink(x.count))
    return err;
  if (x.count == 0)
    return caf::none;
  auto codec = static_cast<uint8_t>(x.codec);
  size_t size = x.size_in_bytes();
  if (auto err = sink(x.base_version, codec))
    return err;
  if (auto err = sink.begin_sequence(size))
    return err;
  if (size > 0)
    if (auto err = sink.apply_raw(size, const_cast<uint8_t*>(x.bytes->data())))
      return err;
  return sink.end_sequence();
}

caf::error inspect(caf::deserializer& source, answer_delta& x) {
  x = answer_delta{};
  uint64_t count = 0;
  if (auto err = source(count))
    return err;
  if (count == 0)
    return caf::none;
  uint8_t codec = 0;
  size_t size = 0;
  if (auto err = source(x.base_version, codec))
    return err;
  if (codec != static_cast<uint8_t>(float_codec::fp32)
      && codec != static_cast<uint8_t>(float_codec::bf16)
      && codec != static_cast<uint8_t>(float_codec::fp16))
    return caf::make_error(caf::sec::invalid_argument,
                           "an answer coded as a delta in format " + std::to_string(codec));
  if (auto err = source.begin_sequence(size))
    return err;
  if (auto err = check_frame_block(source, size))
    return err;
  if (count > size * 4)
    return caf::make_error(caf::sec::invalid_argument,
                           "a delta of " + std::to_string(count) + " values in "
                             + std::to_string(size) + " bytes");
  auto bytes = std::make_shared<std::vector<uint8_t>>(size);
  if (size > 0)
    if (auto err = source.apply_raw(size, bytes->data()))
      return err;
  x.count = count;
  x.codec = static_cast<float_codec>(codec);
  x.bytes = std::move(bytes);
  return source.end_sequence();
}

} // namespace troupe::detail
