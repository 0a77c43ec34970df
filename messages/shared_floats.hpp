// A flat float buffer shared between messages (gradients, parameters). Inside
// one process a copy shares the buffer; across processes it is written as one
// block of raw bytes instead of CAF's element-by-element default (~100x faster).
// That block assumes every node has the same byte order and IEEE-754 floats;
// the connect handshake checks it.
#pragma once

#include <cstddef>
#include <memory>
#include <type_traits>
#include <vector>

#include <caf/deserializer.hpp>
#include <caf/error.hpp>
#include <caf/meta/type_name.hpp>
#include <caf/serializer.hpp>

namespace troupe {

/// Holds an immutable float buffer shared by every copy of the value.
struct shared_floats {
  std::shared_ptr<const std::vector<float>> values;

  shared_floats() = default;
  explicit shared_floats(std::shared_ptr<const std::vector<float>> v)
    : values(std::move(v)) {}
  /// Takes ownership of `v` as the shared buffer.
  explicit shared_floats(std::vector<float> v)
    : values(std::make_shared<const std::vector<float>>(std::move(v))) {}

  size_t size() const { return values ? values->size() : 0; }
  const float* data() const { return values ? values->data() : nullptr; }
};

/// Writes the buffer as a length and one raw block.
caf::error inspect(caf::serializer& sink, shared_floats& x);

/// Reads what inspect(serializer&) wrote into a fresh buffer.
caf::error inspect(caf::deserializer& source, shared_floats& x);

/// Describes the buffer for other inspectors (to_string): its size only.
template <class Inspector>
typename std::enable_if<!std::is_base_of<caf::serializer, Inspector>::value
                          && !std::is_base_of<caf::deserializer, Inspector>::value,
                        typename Inspector::result_type>::type
inspect(Inspector& f, shared_floats& x) {
  auto size = x.size();
  return f(caf::meta::type_name("shared_floats"), size);
}

} // namespace troupe
