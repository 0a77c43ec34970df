// Coding a float view with its zeros as a mask, fp32 exponents apart, and
// its blocks on the wire.
#include "messages/masked_floats.hpp"

#include <algorithm>
#include <cstring>
#include <memory>

#include "messages/exponent_split.hpp"
#include "messages/shared_floats.hpp"
#include "messages/zero_mask.hpp"

namespace troupe::detail {

namespace {

// The sizes of an fp32 masked view's exponents and mantissas for its
// values; what is wrong with them, or empty.
std::string exponent_fault(const masked_floats& m) {
  const size_t n = m.kept;
  if (m.exponents.size() != (n + 1) / 2 || m.lows.size() != 3 * n
      || (n % 2 == 1 && (m.exponents.back() >> 4) != 0))
    return std::to_string(m.exponents.size()) + " bytes of exponents and "
           + std::to_string(m.lows.size()) + " of mantissas for " + std::to_string(n)
           + " fp32 values";
  return {};
}

template <class Word>
caf::error write_block(caf::serializer& sink, const std::vector<Word>& block) {
  size_t length = block.size();
  if (auto err = sink.begin_sequence(length))
    return err;
  if (length > 0)
    if (auto err = sink.apply_raw(length * sizeof(Word), const_cast<Word*>(block.data())))
      return err;
  return sink.end_sequence();
}

} // namespace

size_t masked_floats::wire_bytes() const {
  return mask.size() + exponents.size() + lows.size() + escapes.size()
         + words.size() * sizeof(uint16_t) + (codec == float_codec::fp32 ? 1 : 0);
}

std::optional<masked_floats> mask_floats(float_codec codec, const float* values, size_t count) {
  if (codec == float_codec::int8 || count == 0)
    return std::nullopt;
  masked_floats m;
  m.codec = codec;
  m.count = count;
  m.mask.resize((count + 7) / 8);
  if (codec == float_codec::fp32) {
    std::unique_ptr<uint32_t[]> kept(new uint32_t[count]);
    m.kept = mask_zeros(values, count, m.mask.data(), kept.get());
    m.base = largest_exponent(kept.get(), m.kept);
    m.exponents.assign((m.kept + 1) / 2, 0);
    m.lows.resize(3 * m.kept + split_spare_bytes);
    split_exponents(kept.get(), m.kept, m.base, m.exponents.data(), m.lows.data(), m.escapes);
    m.lows.resize(3 * m.kept);
  } else {
    std::vector<uint16_t> all(count);
    encode_16(codec, values, count, all.data());
    m.words.resize(count);
    m.kept = mask_zeros(all.data(), count, m.mask.data(), m.words.data());
    m.words.resize(m.kept);
  }
  const size_t bytes = m.wire_bytes();
  if (bytes >= count * codec_width(codec) || !mask_expansion_allowed(count, bytes))
    return std::nullopt;
  return m;
}

std::string unmask_floats(const masked_floats& m, std::shared_ptr<float>& out) {
  // Sizes first, each bounded by the frame's bytes, before anything is allocated.
  if (m.mask.size() != (m.count + 7) / 8)
    return "a zero mask of " + std::to_string(m.mask.size()) + " bytes for "
           + std::to_string(m.count) + " values";
  if (!mask_expansion_allowed(m.count, m.wire_bytes()))
    return std::to_string(m.wire_bytes()) + " bytes for " + std::to_string(m.count)
           + " values, over " + std::to_string(max_mask_expansion) + " floats' bytes a byte";
  const bool fp32 = m.codec == float_codec::fp32;
  if (m.kept > m.count || (fp32 ? m.lows.size() / 3 : m.words.size()) < m.kept)
    return std::to_string(m.kept) + " values kept of " + std::to_string(m.count);
  if (fp32)
    if (auto fault = exponent_fault(m); !fault.empty())
      return fault;
  // Not zeroed first: the mask's words fill it whole.
  out.reset(new float[m.count], std::default_delete<float[]>());
  if (fp32) {
    std::unique_ptr<uint32_t[]> kept(new uint32_t[m.kept]);
    if (auto fault = join_exponents(m.exponents.data(), m.lows.data(), m.kept, m.base,
                                    m.escapes, kept.get());
        !fault.empty())
      return fault;
    return unmask_zeros(m.mask.data(), m.mask.size(), m.count, kept.get(), m.kept, out.get());
  }
  std::unique_ptr<uint16_t[]> words(new uint16_t[m.count]);
  if (auto fault = unmask_zeros(m.mask.data(), m.mask.size(), m.count, m.words.data(),
                                m.words.size(), words.get());
      !fault.empty())
    return fault;
  decode_16(m.codec, words.get(), m.count, out.get());
  return {};
}

caf::error write_masked(caf::serializer& sink, const masked_floats& m) {
  if (auto err = write_block(sink, m.mask))
    return err;
  if (m.codec != float_codec::fp32)
    return write_block(sink, m.words);
  uint64_t kept = m.kept;
  uint8_t base = m.base;
  if (auto err = sink(kept, base))
    return err;
  if (auto err = write_block(sink, m.exponents))
    return err;
  if (auto err = write_block(sink, m.lows))
    return err;
  return write_block(sink, m.escapes);
}

caf::error read_masked(caf::deserializer& source, float_codec codec, uint64_t count,
                       masked_floats& m) {
  m = masked_floats{};
  m.codec = codec;
  m.count = count;
  if (auto err = read_frame_block(source, m.mask))
    return err;
  if (codec != float_codec::fp32) {
    if (auto err = read_frame_block(source, m.words))
      return err;
    m.kept = m.words.size();
    return caf::none;
  }
  if (auto err = source(m.kept, m.base))
    return err;
  if (auto err = read_frame_block(source, m.exponents))
    return err;
  if (auto err = read_frame_block(source, m.lows))
    return err;
  return read_frame_block(source, m.escapes);
}

} // namespace troupe::detail
