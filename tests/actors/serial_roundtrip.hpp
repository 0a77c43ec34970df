// Tools of the serialization tests: float buffers whose bytes a lossy
// encoding would change, and round trips through CAF's binary serializer,
// bare or inside a caf::message. Needs Catch2.
#pragma once

#include <catch2/catch.hpp>

#include <limits>
#include <memory>
#include <string>
#include <typeinfo>
#include <vector>

#include <caf/all.hpp>

#include "messages/protocol.hpp"
#include "tests/actors/test_system.hpp"

namespace troupe::testing {

inline shared_floats floats(std::vector<float> values) {
  return shared_floats{std::make_shared<const std::vector<float>>(std::move(values))};
}

// Values whose bytes a lossy or reordering encoding would change.
inline shared_floats tricky_floats() {
  return floats({0.0f, -0.0f, 1.0f, -1.5f, 3.14159265f,
                 std::numeric_limits<float>::denorm_min(),
                 std::numeric_limits<float>::max(),
                 std::numeric_limits<float>::lowest(),
                 std::numeric_limits<float>::infinity(),
                 -std::numeric_limits<float>::infinity(),
                 std::numeric_limits<float>::quiet_NaN(), 1e-30f});
}

template <class T>
std::vector<char> serialize(caf::actor_system& sys, T& value) {
  std::vector<char> buf;
  caf::binary_serializer sink{sys, buf};
  auto err = sink(value);
  INFO(sys.render(err));
  REQUIRE_FALSE(err);
  return buf;
}

template <class T>
T deserialize(caf::actor_system& sys, const std::vector<char>& buf) {
  T value;
  caf::binary_deserializer source{sys, buf};
  auto err = source(value);
  INFO(sys.render(err));
  REQUIRE_FALSE(err);
  CHECK(source.remaining() == 0);
  return value;
}

template <class T>
T roundtrip(caf::actor_system& sys, T value) {
  return deserialize<T>(sys, serialize(sys, value));
}

// Sends a caf::message holding `value` through the serializer, which names
// each element by its registered portable name and rebuilds it from the
// registry on the way back: an unregistered type fails here.
template <class T>
T roundtrip_in_message(caf::actor_system& sys, const T& value) {
  auto msg = caf::make_message(value);
  auto buf = serialize(sys, msg);
  auto back = deserialize<caf::message>(sys, buf);
  REQUIRE(back.size() == 1);
  REQUIRE(back.template match_element<T>(0));
  return back.template get_as<T>(0);
}

template <class T>
std::string registered_name(caf::actor_system& sys) {
  return sys.types().portable_name(0, &typeid(T));
}

} // namespace troupe::testing
