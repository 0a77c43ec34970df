// CRC-32C (Castagnoli), the checksum of TFRecord framing, and the mask that
// framing stores it under.
#pragma once

#include <cstddef>
#include <cstdint>

namespace troupe::detail {

/// Computes the CRC-32C (reflected polynomial 0x82F63B78) of `size` bytes.
uint32_t crc32c(const void* data, std::size_t size);

/// Masks a CRC as TFRecord framing stores it: rotated right by 15 bits, plus
/// 0xa282ead8 (a CRC of bytes that embed CRCs is then no weaker).
uint32_t mask_crc32c(uint32_t crc);

} // namespace troupe::detail
