// Reads TFRecord framing back as TensorBoard's reader does, written from the
// format alone (not from the writer): the length and its masked CRC-32C,
// the data and its masked CRC-32C, for every record.
#pragma once

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "actors/report/crc32c.hpp"

namespace troupe::testing {

/// What a file held: its records' data, up to the first damaged record, and
/// a sentence on that damage ("" when every byte was a sound record).
struct tfrecords {
  std::vector<std::string> records;
  std::string damage;
};

/// Reads the whole file at `path` as bytes.
inline std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// Reads `count` little-endian bytes at `at` as an unsigned integer.
inline uint64_t little_endian(const std::string& bytes, std::size_t at, int count) {
  uint64_t value = 0;
  for (int i = count - 1; i >= 0; --i)
    value = (value << 8) | static_cast<unsigned char>(bytes[at + static_cast<std::size_t>(i)]);
  return value;
}

/// Applies TFRecord's mask, restated from the format: rotate right 15, add.
inline uint32_t masked(uint32_t crc) {
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

/// Splits `bytes` into records, checking the framing and both CRCs of each.
inline tfrecords read_tfrecords(const std::string& bytes) {
  tfrecords out;
  std::size_t at = 0;
  while (at < bytes.size()) {
    if (bytes.size() - at < 12) {
      out.damage = "truncated header at byte " + std::to_string(at);
      return out;
    }
    const uint64_t length = little_endian(bytes, at, 8);
    if (masked(crc32c(bytes.data() + at, 8)) != little_endian(bytes, at + 8, 4)) {
      out.damage = "length CRC mismatch at byte " + std::to_string(at);
      return out;
    }
    const std::size_t after_header = bytes.size() - at - 12;
    if (after_header < 4 || length > after_header - 4) {
      out.damage = "truncated record at byte " + std::to_string(at);
      return out;
    }
    const auto data = bytes.substr(at + 12, length);
    if (masked(crc32c(data.data(), data.size())) != little_endian(bytes, at + 12 + length, 4)) {
      out.damage = "data CRC mismatch at byte " + std::to_string(at);
      return out;
    }
    out.records.push_back(data);
    at += 12 + length + 4;
  }
  return out;
}

} // namespace troupe::testing
