// Bulk serialization of shared_floats (fp32, 16-bit values of a codec, or
// int8 values with their block scales, the first two with their zeros as a
// mask where asked); device_floats refuses the wire.
#include "messages/device_floats.hpp"
#include "messages/shared_floats.hpp"
#include "messages/masked_floats.hpp"

#include <cstdint>

#include <caf/binary_deserializer.hpp>
#include <caf/sec.hpp>

namespace troupe::detail {

shared_floats shared_floats::rounded(float_codec to) const {
  if (to == float_codec::fp32)
    return *this;
  auto values = std::make_shared<std::vector<float>>(count);
  std::shared_ptr<const int8_values> q;
  if (to == float_codec::int8) {
    auto quantized = std::make_shared<int8_values>(quantize_int8(data(), count, 0));
    dequantize_int8(*quantized, 0, count, values->data());
    q = std::move(quantized);
  } else {
    round_into(to, data(), count, values->data());
  }
  shared_floats copy{std::move(values)};
  copy.codec = to;
  copy.int8 = std::move(q);
  return copy;
}

caf::error check_frame_block(const caf::deserializer& source, size_t bytes) {
  const auto* frame = dynamic_cast<const caf::binary_deserializer*>(&source);
  if (frame != nullptr && bytes > frame->remaining())
    return caf::make_error(caf::sec::end_of_stream,
                           "a block of " + std::to_string(bytes) + " bytes in "
                             + std::to_string(frame->remaining()));
  if (bytes > max_wire_floats * sizeof(float))
    return caf::make_error(caf::sec::invalid_argument,
                           "a block of " + std::to_string(bytes) + " bytes");
  return caf::none;
}

namespace {

// The 16-bit block of a codec'd view: its length in bytes, then the values.
caf::error write_16(caf::serializer& sink, const shared_floats& x) {
  std::vector<uint16_t> values(x.size());
  encode_16(x.codec, x.data(), x.size(), values.data());
  size_t bytes = values.size() * sizeof(uint16_t);
  if (auto err = sink.begin_sequence(bytes))
    return err;
  if (bytes > 0)
    if (auto err = sink.apply_raw(bytes, values.data()))
      return err;
  return sink.end_sequence();
}

// Reads a 16-bit block of `size` values into `x`; a block of another length
// is read past and recorded in x.fault, for the receiver to refuse by name.
caf::error read_16(caf::deserializer& source, size_t size, float_codec codec,
                   shared_floats& x) {
  size_t bytes = 0;
  if (auto err = source.begin_sequence(bytes))
    return err;
  if (auto err = check_frame_block(source, bytes))
    return err;
  std::vector<uint16_t> values((bytes + 1) / sizeof(uint16_t));
  if (bytes > 0)
    if (auto err = source.apply_raw(bytes, values.data()))
      return err;
  x = shared_floats{};
  x.codec = codec;
  if (bytes != size * sizeof(uint16_t)) {
    x.fault = std::to_string(bytes) + " bytes for " + std::to_string(size) + " "
              + codec_name(codec) + " values";
    return source.end_sequence();
  }
  auto widened = std::make_shared<std::vector<float>>(size);
  decode_16(codec, values.data(), size, widened->data());
  x = shared_floats{std::move(widened)};
  x.codec = codec;
  return source.end_sequence();
}

// Writes the int8 form of the view: the parameter index of its first value,
// its int8 values and the scales of the blocks they overlap, each block with
// its length.
caf::error write_int8(caf::serializer& sink, const shared_floats& x) {
  static const int8_values none;
  const int8_values& q = x.int8 ? *x.int8 : none;
  if (!x.int8 && x.size() > 0)
    return caf::make_error(caf::sec::invalid_argument,
                           "an int8 view of " + std::to_string(x.size())
                             + " floats without their int8 values");
  uint64_t first = x.first_parameter();
  size_t bytes = x.size();
  size_t scales = int8_blocks_spanned(first, bytes);
  const size_t first_scale = first / int8_block_size - q.first / int8_block_size;
  if (auto err = sink(first))
    return err;
  if (auto err = sink.begin_sequence(bytes))
    return err;
  if (bytes > 0)
    if (auto err = sink.apply_raw(bytes, const_cast<int8_t*>(q.values.data() + x.offset)))
      return err;
  if (auto err = sink.end_sequence())
    return err;
  if (auto err = sink.begin_sequence(scales))
    return err;
  if (scales > 0)
    if (auto err = sink.apply_raw(scales * sizeof(float),
                                  const_cast<float*>(q.scales.data() + first_scale)))
      return err;
  return sink.end_sequence();
}

// Reads the int8 form of `size` values into `x`, widened; a malformed one
// (int8_fault) is read past and recorded in x.fault.
caf::error read_int8(caf::deserializer& source, size_t size, shared_floats& x) {
  auto q = std::make_shared<int8_values>();
  if (auto err = source(q->first))
    return err;
  if (auto err = read_frame_block(source, q->values))
    return err;
  if (auto err = read_frame_block(source, q->scales))
    return err;
  x = shared_floats{};
  x.codec = float_codec::int8;
  if (q->first > max_wire_floats) {
    x.fault = "int8 values from parameter " + std::to_string(q->first);
    return caf::none;
  }
  if (x.fault = int8_fault(*q, size); !x.fault.empty())
    return caf::none;
  auto widened = std::make_shared<std::vector<float>>(size);
  dequantize_int8(*q, 0, size, widened->data());
  x = shared_floats{std::move(widened)};
  x.codec = float_codec::int8;
  x.int8 = std::move(q);
  return caf::none;
}

// Reads the masked form of `size` values of `codec` into `x`, widened; one
// whose blocks do not add up (unmask_floats) is read past and recorded in
// x.fault.
caf::error read_masked_view(caf::deserializer& source, size_t size, float_codec codec,
                            shared_floats& x) {
  masked_floats m;
  if (auto err = read_masked(source, codec, size, m))
    return err;
  x = shared_floats{};
  x.codec = codec;
  std::shared_ptr<float> values;
  if (x.fault = unmask_floats(m, values); !x.fault.empty())
    return caf::none;
  x = shared_floats{std::shared_ptr<const float>(std::move(values)), 0, size};
  x.codec = codec;
  return caf::none;
}

// Reads `size` raw floats into a fresh buffer in `x`.
caf::error read_fp32(caf::deserializer& source, size_t size, shared_floats& x) {
  // A frame announces its count before its floats: allocate only what the
  // bytes at hand can fill (every message off the wire is read from bytes).
  if (const auto* bytes = dynamic_cast<const caf::binary_deserializer*>(&source);
      bytes != nullptr && size > bytes->remaining() / sizeof(float))
    return caf::make_error(caf::sec::end_of_stream,
                           "a float buffer of " + std::to_string(size) + " elements in "
                             + std::to_string(bytes->remaining()) + " bytes");
  // Not zeroed first: the bytes fill it whole.
  std::shared_ptr<float> values(new float[size], std::default_delete<float[]>());
  if (size > 0)
    if (auto err = source.apply_raw(size * sizeof(float), values.get()))
      return err;
  x = shared_floats{std::shared_ptr<const float>(std::move(values)), 0, size};
  return caf::none;
}

} // namespace

caf::error inspect(caf::serializer& sink, shared_floats& x) {
  const bool masked = x.masked && x.codec != float_codec::int8 && x.masked->codec == x.codec
                      && x.masked->count == x.size();
  auto codec = static_cast<uint8_t>(static_cast<uint8_t>(x.codec) | (masked ? zero_mask_form : 0));
  if (auto err = sink(codec))
    return err;
  size_t size = x.size();
  if (auto err = sink.begin_sequence(size))
    return err;
  if (masked) {
    if (auto err = write_masked(sink, *x.masked))
      return err;
  } else if (x.codec == float_codec::int8) {
    if (auto err = write_int8(sink, x))
      return err;
  } else if (x.codec != float_codec::fp32) {
    if (auto err = write_16(sink, x))
      return err;
  } else if (size > 0) {
    if (auto err = sink.apply_raw(size * sizeof(float),
                                  const_cast<float*>(x.data())))
      return err;
  }
  return sink.end_sequence();
}

caf::error inspect(caf::deserializer& source, shared_floats& x) {
  uint8_t form = 0;
  if (auto err = source(form))
    return err;
  const bool masked = (form & zero_mask_form) != 0;
  const auto codec = static_cast<uint8_t>(form & ~zero_mask_form);
  if (!is_float_codec(codec)
      || (masked && codec == static_cast<uint8_t>(float_codec::int8)))
    return caf::make_error(caf::sec::invalid_argument,
                           "a float buffer in format " + std::to_string(form));
  size_t size = 0;
  if (auto err = source.begin_sequence(size))
    return err;
  if (size > max_wire_floats)
    return caf::make_error(caf::sec::invalid_argument,
                           "float buffer of " + std::to_string(size) + " elements");
  const auto as = static_cast<float_codec>(codec);
  caf::error err;
  if (masked)
    err = read_masked_view(source, size, as, x);
  else if (as == float_codec::int8)
    err = read_int8(source, size, x);
  else if (as != float_codec::fp32)
    err = read_16(source, size, as, x);
  else
    err = read_fp32(source, size, x);
  if (err)
    return err;
  return source.end_sequence();
}

caf::error inspect(caf::serializer&, device_floats& x) {
  if (!x)
    return caf::none;
  return caf::make_error(caf::sec::invalid_argument,
                         "a buffer of " + std::to_string(x.floats.size()) + " floats in "
                           + x.device + " memory cannot leave its process");
}

caf::error inspect(caf::deserializer&, device_floats& x) {
  x = device_floats{}; // never written: a message that held one stayed in its process
  return caf::none;
}

} // namespace troupe::detail
