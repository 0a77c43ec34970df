// The checkpoint tests' sample checkpoint and the byte-level tools that
// forge and edit checkpoint files.
#pragma once

#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "model/checkpoint.hpp"
#include "tests/temp_dir.hpp"

namespace troupe::testing {

using bytes = std::vector<unsigned char>;

// The settings a checkpoint of sample() records, and their length on disk.
inline const std::vector<setting_text> sample_settings{
  {"mode", "sync"}, {"replicas", "2"}, {"seed", "42"}, {"lr", "0.001"}};
inline const size_t sample_settings_bytes =
  8 + std::string("mode=sync\nreplicas=2\nseed=42\nlr=0.001\n").size();
inline const size_t rate_factor_bytes = 8 + sizeof(float); // format 4's last field
inline const size_t no_residuals_bytes = 8; // format 5's last field: a count of 0

inline checkpoint sample(size_t parameter_count = 1000, float offset = 0.0f) {
  checkpoint c;
  c.model = "784-128relu-10";
  c.settings = sample_settings;
  c.config_fingerprint = settings_fingerprint(sample_settings);
  c.version = 4242;
  c.round = 4243;
  c.epoch = 3;
  c.epoch_round = 17;
  c.optimizer = "adam";
  c.optimizer_steps = 4242;
  for (size_t i = 0; i < parameter_count; ++i)
    c.params.push_back(offset + std::sin(static_cast<float>(i)) * 0.1f);
  for (size_t i = 0; i < 2 * parameter_count; ++i)
    c.optimizer_state.push_back(offset + std::cos(static_cast<float>(i)) * 1e-3f);
  return c;
}

inline bytes load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return bytes(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline void save(const std::string& path, const bytes& content) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(content.data()),
            static_cast<std::streamsize>(content.size()));
}

inline bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// The standard CRC-32 (zlib's), written out so that the tests can forge files
// whose checksums match and check that the format uses the standard CRC.
inline uint32_t reference_crc32(const unsigned char* data, size_t size) {
  uint32_t crc = 0xffffffffu;
  for (size_t i = 0; i < size; ++i) {
    crc ^= data[i];
    for (int bit = 0; bit < 8; ++bit)
      crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

// Recomputes both checksums of a file image after a test edited it.
inline void reseal(bytes& file) {
  uint64_t payload_size = file.size() - 40;
  std::memcpy(file.data() + 24, &payload_size, 8);
  uint32_t payload_crc = reference_crc32(file.data() + 40, file.size() - 40);
  std::memcpy(file.data() + 20, &payload_crc, 4);
  uint32_t header_crc = reference_crc32(file.data(), 36);
  std::memcpy(file.data() + 36, &header_crc, 4);
}

inline std::string message_of(const expected<checkpoint>& result) {
  return result ? std::string("(read succeeded)") : result.error().message;
}

} // namespace troupe::testing
