// Bulk serialization of shared_floats; device_floats refuses the wire.
#include "messages/device_floats.hpp"
#include "messages/shared_floats.hpp"

#include <caf/binary_deserializer.hpp>
#include <caf/sec.hpp>

namespace troupe {

namespace {

// A gradient of a model beyond ~1 G parameters is a corrupt frame, not a model.
constexpr size_t max_floats = size_t{1} << 30;

} // namespace

caf::error inspect(caf::serializer& sink, shared_floats& x) {
  size_t size = x.size();
  if (auto err = sink.begin_sequence(size))
    return err;
  if (size > 0) {
    if (auto err = sink.apply_raw(size * sizeof(float),
                                  const_cast<float*>(x.data())))
      return err;
  }
  return sink.end_sequence();
}

caf::error inspect(caf::deserializer& source, shared_floats& x) {
  size_t size = 0;
  if (auto err = source.begin_sequence(size))
    return err;
  if (size > max_floats)
    return caf::make_error(caf::sec::invalid_argument,
                           "float buffer of " + std::to_string(size) + " elements");
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
