// Encodes .npy files: the magic and version, the header's Python dict padded
// with spaces to a multiple of 64 bytes, then the floats' little-endian bytes.
#include "model/data/npy_writer.hpp"

#include <cstdint>
#include <cstring>

namespace troupe::detail {

namespace {

constexpr size_t npy_alignment = 64; // numpy.save aligns the data to this
constexpr size_t npy_preamble = 10;  // magic (6), version (2), header length (2)

std::string header_dict(size_t rows, size_t cols) {
  std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': ("
                     + std::to_string(rows) + ", " + std::to_string(cols) + "), }";
  const size_t unpadded = npy_preamble + dict.size() + 1; // + the closing newline
  dict.append((npy_alignment - unpadded % npy_alignment) % npy_alignment, ' ');
  dict += '\n';
  return dict;
}

} // namespace

std::string encode_npy(const float* values, size_t rows, size_t cols) {
  const std::string dict = header_dict(rows, cols);
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(dict.size() & 0xff);
  out += static_cast<char>((dict.size() >> 8) & 0xff);
  out += dict;
  const size_t count = rows * cols;
  out.reserve(out.size() + sizeof(float) * count);
  for (size_t i = 0; i < count; ++i) {
    uint32_t bits;
    std::memcpy(&bits, &values[i], sizeof(bits));
    for (int shift = 0; shift < 32; shift += 8)
      out += static_cast<char>((bits >> shift) & 0xff);
  }
  return out;
}

} // namespace troupe::detail
