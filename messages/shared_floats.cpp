// Bulk serialization of shared_floats (fp32, or 16-bit values of a codec);
// device_floats refuses the wire.
#include "messages/device_floats.hpp"
#include "messages/shared_floats.hpp"

#include <caf/binary_deserializer.hpp>
#include <caf/sec.hpp>

namespace troupe {

namespace {

// A gradient of a model beyond ~1 G parameters is a corrupt frame, not a model.
constexpr size_t max_floats = size_t{1} << 30;

} // namespace

shared_floats shared_floats::rounded(float_codec to) const {
  if (to == float_codec::fp32)
    return *this;
  auto values = std::make_shared<std::vector<float>>(count);
  round_into(to, data(), count, values->data());
  shared_floats copy{std::move(values)};
  copy.codec = to;
  return copy;
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
  const auto* frame = dynamic_cast<const caf::binary_deserializer*>(&source);
  if (frame != nullptr && bytes > frame->remaining())
    return caf::make_error(caf::sec::end_of_stream,
                           "a block of " + std::to_string(bytes) + " bytes in "
                             + std::to_string(frame->remaining()));
  if (bytes > max_floats * sizeof(float))
    return caf::make_error(caf::sec::invalid_argument,
                           "a block of " + std::to_string(bytes) + " bytes");
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

} // namespace

caf::error inspect(caf::serializer& sink, shared_floats& x) {
  auto codec = static_cast<uint8_t>(x.codec);
  if (auto err = sink(codec))
    return err;
  size_t size = x.size();
  if (auto err = sink.begin_sequence(size))
    return err;
  if (x.codec != float_codec::fp32) {
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
  uint8_t codec = 0;
  if (auto err = source(codec))
    return err;
  if (!is_float_codec(codec))
    return caf::make_error(caf::sec::invalid_argument,
                           "a float buffer in format " + std::to_string(codec));
  size_t size = 0;
  if (auto err = source.begin_sequence(size))
    return err;
  if (size > max_floats)
    return caf::make_error(caf::sec::invalid_argument,
                           "float buffer of " + std::to_string(size) + " elements");
  if (codec != static_cast<uint8_t>(float_codec::fp32)) {
    if (auto err = read_16(source, size, static_cast<float_codec>(codec), x))
      return err;
    return source.end_sequence();
  }
  // A frame announces its count before its floats: allocate only what the
  // bytes at hand can fill (every message off the wire is read from bytes).
  if (const auto* bytes = dynamic_cast<const caf::binary_deserializer*>(&source);
      bytes != nullptr && size > bytes->remaining() / sizeof(float))
    return caf::make_error(caf::sec::end_of_stream,
                           "a float buffer of " + std::to_string(size) + " elements in "
                             + std::to_string(bytes->remaining()) + " bytes");
  auto values = std::make_shared<std::vector<float>>(size);
  if (size > 0) {
    if (auto err = source.apply_raw(size * sizeof(float), values->data()))
      return err;
  }
  x = shared_floats{std::move(values)};
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

} // namespace troupe
