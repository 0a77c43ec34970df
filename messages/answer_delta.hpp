// A shard's answer coded against the parameters the replica already holds.
// Between two sync rounds a parameter moves by one optimizer step, so most
// of its bits stay: per value, the XOR of its wire bits with the base's (the
// fp32 bits, or bf16's and fp16's 16-bit values) travels as its significant
// low bytes, behind a 2-bit tag that says how many. Lossless: the replica
// gets the very bits a whole answer would carry (docs/consistency.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include <caf/deserializer.hpp>
#include <caf/error.hpp>
#include <caf/meta/type_name.hpp>
#include <caf/serializer.hpp>

#include "messages/float_codec.hpp"

namespace troupe::detail {

/// Holds parameters coded against version `base_version` of the same
/// slice: `count` values of `codec` (fp32, bf16 or fp16). Empty (count 0)
/// when the answer carries its values whole.
struct answer_delta {
  uint64_t base_version = 0;
  uint64_t count = 0;
  float_codec codec = float_codec::fp32;
  // The tags (2 bits a value, ceil(count / 4) bytes), then each value's low
  // bytes, least significant first.
  std::shared_ptr<const std::vector<uint8_t>> bytes;

  explicit operator bool() const { return count > 0; }
  /// Returns the bytes it takes on the wire.
  size_t size_in_bytes() const { return bytes ? bytes->size() : 0; }
};

/// Codes `now` against `base` (`count` floats each, both rounded to `codec`
/// already); nothing if the code would not be smaller than the values whole.
std::optional<answer_delta> code_delta(float_codec codec, const float* base, const float* now,
                                       size_t count, uint64_t base_version);

/// Turns `values` (`count` floats of the base) into the coded parameters.
/// Returns what was wrong, leaving `values` as they were: a count or codec
/// other than the slice's, a tag no value of the codec has, or bytes that do
/// not add up to the tags'. Empty when applied.
std::string apply_delta(const answer_delta& delta, float* values, size_t count);

/// Writes the count, and with values the base version, the codec and the bytes.
caf::error inspect(caf::serializer& sink, answer_delta& x);

/// Reads what inspect(serializer&) wrote; refuses a codec other than fp32,
/// bf16 or fp16 and bytes beyond the frame's before allocating them.
caf::error inspect(caf::deserializer& source, answer_delta& x);

/// Describes the delta for other inspectors (to_string): its count only.
template <class Inspector>
typename std::enable_if<!std::is_base_of<caf::serializer, Inspector>::value
                          && !std::is_base_of<caf::deserializer, Inspector>::value,
                        typename Inspector::result_type>::type
inspect(Inspector& f, answer_delta& x) {
  return f(caf::meta::type_name("answer_delta"), x.count);
}

} // namespace troupe::detail
