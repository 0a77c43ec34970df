// A writer for NumPy's .npy format (version 1.0), so that a test can hand
// float tables to a Python check.
#pragma once

#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>

namespace troupe {

/// Writes `values` (rows, cols) as a little-endian float32 .npy file; returns
/// false when the file cannot be written.
inline bool write_npy(const std::string& path, const float* values, size_t rows, size_t cols) {
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': ("
                       + std::to_string(rows) + ", " + std::to_string(cols) + "), }";
  // The magic (6), version (2) and length (2) bytes, the dictionary and its
  // newline-terminated padding make a multiple of 64 bytes.
  const size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  out.reserve(out.size() + 4 * rows * cols);
  for (size_t i = 0; i < rows * cols; ++i) {
    uint32_t bits;
    std::memcpy(&bits, &values[i], sizeof(bits));
    for (int shift = 0; shift < 32; shift += 8)
      out += static_cast<char>((bits >> shift) & 0xff);
  }
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file.write(out.data(), static_cast<std::streamsize>(out.size()));
  return static_cast<bool>(file.flush());
}

} // namespace troupe
