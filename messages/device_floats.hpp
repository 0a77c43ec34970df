// Floats in a device's memory that a replica and a store shard of one
// process hand each other without a copy to the host (--store-device): a
// view of device memory, the event after which it is written, and the
// producer's check of it. It never leaves its process: serializing one is
// an error, and a message read from the wire has none.
#pragma once

#include <memory>
#include <string>
#include <type_traits>

#include <caf/deserializer.hpp>
#include <caf/error.hpp>
#include <caf/meta/type_name.hpp>
#include <caf/serializer.hpp>

#include "messages/shared_floats.hpp"

namespace troupe::detail {

class device_event; // model/backend/backend.hpp

/// Holds a view of floats in `device`'s memory: only code on a device of
/// that kind reads it. Its writes have finished when it is sent, or finish
/// when `ready` fires: a reader queues its ops behind that event. Where its
/// producer checked on the device whether its floats are finite, the float
/// `non_finite` points to (in the same memory, written before `ready`) is
/// non-zero if any is NaN or Inf, and a reader must not use them.
struct device_floats {
  shared_floats floats; // its pointer is the device's
  std::string device;   // e.g. "cuda:0"
  std::shared_ptr<const device_event> ready;
  std::shared_ptr<const float> non_finite; // or null: unchecked

  /// Tells whether it holds floats.
  explicit operator bool() const { return floats.buffer != nullptr; }

  /// Returns the view of `count` floats from `offset` on, within this one:
  /// the same memory, event and check.
  device_floats slice(size_t offset, size_t count) const {
    return device_floats{floats.slice(offset, count), device, ready, non_finite};
  }
};

/// Refuses to write a device buffer (it cannot leave its process); an empty
/// one writes nothing.
caf::error inspect(caf::serializer& sink, device_floats& x);

/// Reads nothing: what inspect(serializer&) wrote.
caf::error inspect(caf::deserializer& source, device_floats& x);

/// Describes the view for other inspectors (to_string): its device and size.
template <class Inspector>
typename std::enable_if<!std::is_base_of<caf::serializer, Inspector>::value
                          && !std::is_base_of<caf::deserializer, Inspector>::value,
                        typename Inspector::result_type>::type
inspect(Inspector& f, device_floats& x) {
  auto size = x.floats.size();
  return f(caf::meta::type_name("device_floats"), x.device, size);
}

} // namespace troupe::detail
