// Bulk serialization of shared_floats.
#include "messages/shared_floats.hpp"

#include <caf/sec.hpp>

namespace troupe {

namespace {

// A gradient of a model beyond ~1 G parameters is a corrupt frame, not a model.
constexpr size_t max_floats = size_t{1} << 30;

} // namespace

caf::error inspect(caf::serializer& sink, shared_floats& x) {
  if (x.on_device())
    return caf::make_error(caf::sec::invalid_argument,
                           "a buffer of " + std::to_string(x.size()) + " floats in " + x.device
                             + " memory cannot leave its process");
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
  auto values = std::make_shared<std::vector<float>>(size);
  if (size > 0) {
    if (auto err = source.apply_raw(size * sizeof(float), values->data()))
      return err;
  }
  x = shared_floats{std::move(values)};
  return source.end_sequence();
}

} // namespace troupe
