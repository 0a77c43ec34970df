// A byte-at-a-time, table-driven CRC-32C: record framing checks a few hundred
// bytes per write, so no wider table or hardware path is worth its code.
#include "actors/report/crc32c.hpp"

#include <array>

namespace troupe::detail {

namespace {

constexpr uint32_t castagnoli_reflected = 0x82F63B78u;

constexpr std::array<uint32_t, 256> make_table() {
  std::array<uint32_t, 256> table{};
  for (uint32_t byte = 0; byte < 256; ++byte) {
    uint32_t crc = byte;
    for (int bit = 0; bit < 8; ++bit)
      crc = (crc & 1u) != 0 ? (crc >> 1) ^ castagnoli_reflected : crc >> 1;
    table[byte] = crc;
  }
  return table;
}

constexpr std::array<uint32_t, 256> table = make_table();

} // namespace

uint32_t crc32c(const void* data, std::size_t size) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  uint32_t crc = 0xFFFFFFFFu;
  for (std::size_t i = 0; i < size; ++i)
    crc = table[(crc ^ bytes[i]) & 0xFFu] ^ (crc >> 8);
  return crc ^ 0xFFFFFFFFu;
}

uint32_t mask_crc32c(uint32_t crc) {
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

} // namespace troupe::detail
