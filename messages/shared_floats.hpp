// A flat float buffer in host memory, or a slice of one, shared between
// messages (gradients, parameters). Inside one process a copy shares the
// buffer; across processes the view is written as one block of raw bytes
// instead of CAF's element-by-element default (docs/benchmarks.md, "The wire").
// That block assumes every node has the same byte order and IEEE-754 floats;
// the connect handshake checks it. Floats rounded to a 16-bit codec
// (float_codec.hpp) travel as 16-bit values and are widened on arrival;
// quantized to int8, as their int8 values and block scales (int8_blocks.hpp).
// Floats in a device's memory travel in a device_floats (device_floats.hpp),
// which never leaves its process.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include <caf/deserializer.hpp>
#include <caf/error.hpp>
#include <caf/meta/type_name.hpp>
#include <caf/sec.hpp>
#include <caf/serializer.hpp>

#include "messages/float_codec.hpp"
#include "messages/int8_blocks.hpp"

namespace troupe::detail {

class device_event;         // model/backend/backend.hpp
struct masked_floats;        // masked_floats.hpp

/// Holds a view of an immutable float buffer shared by every copy of the
/// value: a whole buffer, or a slice of it (offset + count) such as one store
/// shard's part of a gradient. Inside one process a slice is never a copy;
/// across processes only the slice is written, and read back as a whole
/// buffer of its own.
struct shared_floats {
  // The first float of the whole buffer; the pointer also owns what holds
  // the buffer (a std::vector, or memory with its release).
  std::shared_ptr<const float> buffer;
  size_t offset = 0; // where the view starts in `buffer`
  size_t count = 0;  // floats in the view
  // The codec the floats are rounded to: across processes they travel in its
  // width. Marks the values only; whoever sets it has rounded them.
  float_codec codec = float_codec::fp32;
  // int8: the int8 form of the whole buffer, which the floats stand for:
  // int8->values[i] is buffer[i]'s, and int8->first the parameter index of
  // buffer[0]. Across processes a view writes its part of it.
  std::shared_ptr<const int8_values> int8;
  // Read off the wire malformed (a 16-bit or int8 block of the wrong length
  // for its count, a wrong number of scales, a scale that is not finite):
  // what was wrong; the view is then empty. Whoever reads the message
  // refuses it, naming the sender.
  std::string fault;
  // Across processes: the viewed values travel as this, coded with their
  // zeros as a mask (masked_floats.hpp) by whoever set it. Null: whole.
  // Never read back: a reader gets the floats.
  std::shared_ptr<const masked_floats> masked;

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
  /// starts at `first`.
  shared_floats(std::shared_ptr<const float> first, size_t view_offset, size_t view_count)
    : buffer(std::move(first)), offset(view_offset), count(view_count) {}
  /// Takes ownership of `v` as the shared buffer.
  explicit shared_floats(std::vector<float> v)
    : shared_floats(std::make_shared<const std::vector<float>>(std::move(v))) {}

  size_t size() const { return count; }
  /// Returns where the view starts.
  const float* data() const { return buffer ? buffer.get() + offset : nullptr; }
  /// Returns the view of `slice_count` floats from `slice_offset` on, within this view.
  shared_floats slice(size_t slice_offset, size_t slice_count) const {
    shared_floats view{buffer, offset + slice_offset, slice_count};
    view.codec = codec;
    view.int8 = int8;
    return view;
  }
  /// Returns the parameter index of the view's first value in its int8 form
  /// (int8 views only).
  uint64_t first_parameter() const { return int8 ? int8->first + offset : 0; }
  /// Returns a copy of the view with `values` rounded to `codec` (a view of
  /// the same buffer for fp32; int8: quantized without error feedback, the
  /// view's first value starting a block, as parameter 0).
  shared_floats rounded(float_codec to) const;
  /// Copies the viewed floats out.
  std::vector<float> to_vector() const { return std::vector<float>(data(), data() + count); }

private:
  // Takes `v` over as the buffer. The reference is dropped here, not when
  // the caller's argument ends (a policy test counts the holders).
  void own(std::shared_ptr<const std::vector<float>> v) {
    buffer = std::shared_ptr<const float>(v, v ? v->data() : nullptr);
    v.reset();
  }
};

/// Writes the codec, the length and the values: the floats as one raw
/// block; their 16-bit values with the block's length in bytes; or (int8)
/// the parameter index of the first, the int8 values with their length, and
/// the scales of the blocks they overlap with their number. With `masked`,
/// an fp32 or 16-bit view writes its codec with zero_mask_form set, its
/// length, then the masked form's blocks (write_masked).
caf::error inspect(caf::serializer& sink, shared_floats& x);

/// Set in a written codec: the values travel as a zero mask and the values it selects.
constexpr uint8_t zero_mask_form = 0x80;

/// Reads what inspect(serializer&) wrote into a fresh buffer, widening
/// 16-bit values and the int8 ones (q * scale); a malformed 16-bit, int8 or
/// masked payload leaves `fault` set.
caf::error inspect(caf::deserializer& source, shared_floats& x);

/// The most floats, or elements of a block, a frame may announce: a gradient
/// of a model beyond ~1 G parameters is a corrupt frame, not a model.
constexpr size_t max_wire_floats = size_t{1} << 30;

/// Refuses a block of `bytes` a frame announces before it is allocated:
/// more than the frame's bytes left, or more than any gradient.
caf::error check_frame_block(const caf::deserializer& source, size_t bytes);

/// Reads one raw block of T with its length into `out`, the length checked
/// against the frame (check_frame_block) before anything is allocated.
template <class T>
caf::error read_frame_block(caf::deserializer& source, std::vector<T>& out) {
  size_t length = 0;
  if (auto err = source.begin_sequence(length))
    return err;
  if (length > max_wire_floats || length > SIZE_MAX / sizeof(T))
    return caf::make_error(caf::sec::invalid_argument,
                           "a block of " + std::to_string(length) + " elements");
  if (auto err = check_frame_block(source, length * sizeof(T)))
    return err;
  out.resize(length);
  if (length > 0)
    if (auto err = source.apply_raw(length * sizeof(T), out.data()))
      return err;
  return source.end_sequence();
}

/// Describes the buffer for other inspectors (to_string): its size only.
template <class Inspector>
typename std::enable_if<!std::is_base_of<caf::serializer, Inspector>::value
                          && !std::is_base_of<caf::deserializer, Inspector>::value,
                        typename Inspector::result_type>::type
inspect(Inspector& f, shared_floats& x) {
  auto size = x.size();
  return f(caf::meta::type_name("shared_floats"), size);
}

} // namespace troupe::detail
