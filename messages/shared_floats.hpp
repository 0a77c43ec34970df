// A flat float buffer, or a slice of one, shared between messages (gradients,
// parameters). Inside one process a copy shares the buffer; across processes
// the view is written as one block of raw bytes instead of CAF's
// element-by-element default (~100x faster).
// That block assumes every node has the same byte order and IEEE-754 floats;
// the connect handshake checks it.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include <caf/deserializer.hpp>
#include <caf/error.hpp>
#include <caf/meta/type_name.hpp>
#include <caf/serializer.hpp>

namespace troupe {

class device_event; // model/backend/backend.hpp

/// Holds a view of an immutable float buffer shared by every copy of the
/// value: a whole buffer, or a slice of it (offset + count) such as one store
/// shard's part of a gradient. Inside one process a slice is never a copy;
/// across processes only the slice is written, and read back as a whole
/// buffer of its own.
///
/// The buffer may also sit in a device's memory (`device`, e.g. "cuda:0"),
/// where a replica and a store shard of one process hand it over without a
/// copy to the host. Such a view holds device pointers: only code on a device
/// of that kind reads it, and it never leaves its process (serializing it is
/// an error). Its writes have finished when it is sent, or finish when
/// `ready` fires: a reader queues its ops behind that event. Its producer
/// has checked on the device whether its floats are finite: the float
/// `non_finite` points to (in the same memory, written before `ready`) is
/// then non-zero if any is NaN or Inf, and a reader must not use them.
struct shared_floats {
  // The first float of the whole buffer; the pointer also owns what holds
  // the buffer (a std::vector, or device memory with its release).
  std::shared_ptr<const float> buffer;
  size_t offset = 0;  // where the view starts in `buffer`
  size_t count = 0;   // floats in the view
  std::string device; // empty: host memory; else the device whose memory holds it
  std::shared_ptr<const device_event> ready; // device memory: its writes are done then
  std::shared_ptr<const float> non_finite;   // device memory: the check's flag, or null

  shared_floats() = default;
  /// Views all of `v`.
  explicit shared_floats(std::shared_ptr<const std::vector<float>> v)
    : count(v ? v->size() : 0) {
    own(std::move(v));
  }
  /// Views `view_count` floats of `v` from `view_offset` on.
  shared_floats(std::shared_ptr<const std::vector<float>> v, size_t view_offset,
                size_t view_count)
    : offset(view_offset), count(view_count) {
    own(std::move(v));
  }
  /// Views `view_count` floats from `view_offset` on of the buffer that
  /// starts at `first`, in `where`'s memory (empty: the host's).
  shared_floats(std::shared_ptr<const float> first, size_t view_offset, size_t view_count,
                std::string where = {})
    : buffer(std::move(first)), offset(view_offset), count(view_count),
      device(std::move(where)) {}
  /// Takes ownership of `v` as the shared buffer.
  explicit shared_floats(std::vector<float> v)
    : shared_floats(std::make_shared<const std::vector<float>>(std::move(v))) {}

  size_t size() const { return count; }
  /// Tells whether the floats sit in a device's memory rather than the host's.
  bool on_device() const { return !device.empty(); }
  /// Returns where the view starts: a device pointer when on_device().
  const float* data() const { return buffer ? buffer.get() + offset : nullptr; }
  /// Returns the view of `slice_count` floats from `slice_offset` on, within this view.
  shared_floats slice(size_t slice_offset, size_t slice_count) const {
    shared_floats view{buffer, offset + slice_offset, slice_count, device};
    view.ready = ready;
    view.non_finite = non_finite;
    return view;
  }
  /// Copies the viewed floats out (host memory only).
  std::vector<float> to_vector() const { return std::vector<float>(data(), data() + count); }

private:
  // Takes `v` over as the buffer. The reference is dropped here, not when
  // the caller's argument ends (a policy test counts the holders).
  void own(std::shared_ptr<const std::vector<float>> v) {
    buffer = std::shared_ptr<const float>(v, v ? v->data() : nullptr);
    v.reset();
  }
};

/// Writes the buffer as a length and one raw block; a buffer in device
/// memory is an error (it cannot leave its process).
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
