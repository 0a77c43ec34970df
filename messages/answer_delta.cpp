// Coding a shard's answer against the version the replica holds: XOR of the
// wire bits, each value's significant low bytes behind a 2-bit tag.
#include "messages/answer_delta.hpp"

#include <algorithm>
#include <cstring>

#include <caf/sec.hpp>

#include "messages/delta_kernels.hpp"
#include "messages/shared_floats.hpp"

namespace troupe::detail {

namespace {

// Values are coded a block at a time, as their wire bits: the floats' own,
// or their 16-bit values (a bf16's are its float's high half: the values
// are rounded already).
constexpr size_t block = 256;

void wire_bits(float_codec codec, const float* values, size_t count, uint32_t* bits) {
  if (codec == float_codec::fp16) {
    uint16_t half[block];
    encode_16(codec, values, count, half);
    for (size_t i = 0; i < count; ++i)
      bits[i] = half[i];
    return;
  }
  std::memcpy(bits, values, count * sizeof(float));
  if (codec == float_codec::bf16)
    for (size_t i = 0; i < count; ++i)
      bits[i] >>= 16;
}

// Writes `count` words back as floats: the bits themselves (fp32; bf16,
// whose XORs were applied to the high halves), or fp16 values widened.
void put_floats(float_codec codec, const uint32_t* bits, size_t count, float* values) {
  if (codec != float_codec::fp16) {
    std::memcpy(values, bits, count * sizeof(float));
    return;
  }
  uint16_t half[block];
  for (size_t i = 0; i < count; ++i)
    half[i] = static_cast<uint16_t>(bits[i]);
  decode_16(codec, half, count, values);
}

} // namespace

std::optional<answer_delta> code_delta(float_codec codec, const float* base, const float* now,
                                       size_t count, uint64_t base_version) {
  if (count == 0 || !(codec == float_codec::fp32 || codec == float_codec::bf16
                      || codec == float_codec::fp16))
    return std::nullopt;
  const bool fp32 = codec == float_codec::fp32;
  const size_t whole = count * codec_width(codec);
  const size_t tags = delta_tag_bytes(count);
  // Room for every value at its widest, and the spare bytes of the last store.
  auto bytes = std::make_shared<std::vector<uint8_t>>(tags + count * 4 + delta_spare_bytes,
                                                      uint8_t{0});
  uint8_t* out = bytes->data() + tags;
  uint32_t before[block];
  uint32_t after[block];
  for (size_t first = 0; first < count; first += block) {
    const size_t n = std::min(block, count - first);
    wire_bits(codec, base + first, n, before);
    wire_bits(codec, now + first, n, after);
    for (size_t i = 0; i < n; ++i)
      after[i] ^= before[i];
    out = code_xors(after, n, fp32, bytes->data() + first / 4, out);
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
  if (count == 0)
    return {};
  const size_t tags = delta_tag_bytes(count);
  const size_t size = delta.size_in_bytes();
  if (size < tags)
    return std::to_string(size) + " bytes for the tags of " + std::to_string(count) + " values";
  const uint8_t* data = delta.bytes->data();
  const bool fp32 = delta.codec == float_codec::fp32;
  const auto length = delta_payload_length(data, count, fp32);
  if (!length)
    return std::string("a tag no ") + codec_name(delta.codec) + " value has";
  if (*length != size - tags)
    return std::to_string(size - tags) + " bytes of values where the tags call for "
           + std::to_string(*length);
  const uint8_t* next = data + tags;
  const uint32_t shift = delta.codec == float_codec::bf16 ? 16 : 0;
  uint32_t bits[block];
  for (size_t first = 0; first < count; first += block) {
    const size_t n = std::min(block, count - first);
    if (delta.codec == float_codec::fp16)
      wire_bits(delta.codec, values + first, n, bits);
    else // the floats' own bits; a bf16's XOR goes to the high half
      std::memcpy(bits, values + first, n * sizeof(float));
    next = apply_xors(data + first / 4, n, fp32, next, data + size, shift, bits);
    put_floats(delta.codec, bits, n, values + first);
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
