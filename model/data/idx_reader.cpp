// Reads IDX image and label files: loads the bytes, inflates them when they
// start with the gzip magic, then checks the header against the payload size.
#include "model/data/idx_reader.hpp"
#include "model/data/file_bytes.hpp"

#include <zlib.h>

#include <climits>
#include <iterator>

namespace troupe::detail {

namespace {

constexpr uint32_t images_magic = 2051; // 0x00000803: unsigned bytes, 3 dimensions
constexpr uint32_t labels_magic = 2049; // 0x00000801: unsigned bytes, 1 dimension
constexpr size_t images_header_size = 16;
constexpr size_t labels_header_size = 8;

error format_error(const std::string& path, const std::string& what) {
  return fail(errc::bad_data, path + ": " + what);
}

uint32_t read_be32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8)
         | uint32_t{p[3]};
}


bool is_gzip(const std::vector<uint8_t>& bytes) {
  return bytes.size() >= 2 && bytes[0] == 0x1f && bytes[1] == 0x8b;
}

// Inflates every gzip member in `packed`. windowBits 15 + 32 makes zlib parse
// the gzip header and check the CRC-32 and length in each member's trailer.
expected<std::vector<uint8_t>> gunzip(const std::string& path,
                                      const std::vector<uint8_t>& packed) {
  z_stream zs{};
  if (inflateInit2(&zs, 15 + 32) != Z_OK)
    return fail(errc::io, path + ": cannot start zlib inflate");
  std::vector<uint8_t> out;
  std::vector<uint8_t> chunk(1 << 16);
  zs.next_in = const_cast<Bytef*>(packed.data());
  // Files over 4 GiB would need chunked input; IDX data sets are far smaller.
  if (packed.size() > UINT_MAX) {
    inflateEnd(&zs);
    return format_error(path, "gzip file larger than 4 GiB is not supported");
  }
  zs.avail_in = static_cast<uInt>(packed.size());
  for (;;) {
    zs.next_out = chunk.data();
    zs.avail_out = static_cast<uInt>(chunk.size());
    int rc = inflate(&zs, Z_NO_FLUSH);
    out.insert(out.end(), chunk.data(), chunk.data() + (chunk.size() - zs.avail_out));
    if (rc == Z_STREAM_END) {
      if (zs.avail_in == 0)
        break;
      size_t offset = packed.size() - zs.avail_in;
      // Another gzip member may follow (as `cat a.gz b.gz` makes); anything
      // else after the end of the stream is garbage.
      if (zs.avail_in >= 2 && zs.next_in[0] == 0x1f && zs.next_in[1] == 0x8b) {
        inflateReset(&zs);
        continue;
      }
      inflateEnd(&zs);
      return format_error(path, std::to_string(zs.avail_in)
                                  + " trailing garbage bytes after the gzip stream"
                                    " (which ends at byte "
                                  + std::to_string(offset) + ")");
    }
    if (rc == Z_OK)
      continue;
    if (rc == Z_BUF_ERROR && zs.avail_in == 0) {
      inflateEnd(&zs);
      return format_error(path, "gzip stream is truncated: it ends after "
                                  + std::to_string(packed.size())
                                  + " bytes without its end marker and CRC trailer");
    }
    std::string detail = zs.msg ? zs.msg : "zlib error " + std::to_string(rc);
    inflateEnd(&zs);
    if (rc == Z_MEM_ERROR)
      return fail(errc::io, path + ": out of memory while inflating");
    if (detail == "incorrect data check")
      detail += " (CRC-32 mismatch)";
    return format_error(path, "gzip data is corrupt: " + detail + " at compressed byte "
                                + std::to_string(packed.size() - zs.avail_in));
  }
  inflateEnd(&zs);
  return out;
}

// Reads the file and inflates it if it is gzip; then checks the magic number.
expected<std::vector<uint8_t>> read_idx_bytes(const std::string& path, uint32_t magic,
                                              size_t header_size, const char* kind) {
  auto raw = read_file_bytes(path);
  if (!raw)
    return raw.error();
  std::vector<uint8_t> bytes;
  if (is_gzip(*raw)) {
    auto inflated = gunzip(path, *raw);
    if (!inflated)
      return inflated.error();
    bytes = std::move(*inflated);
  } else {
    bytes = std::move(*raw);
  }
  if (bytes.size() < 4)
    return format_error(path, "truncated: " + std::to_string(bytes.size())
                                + " bytes, too short for an IDX magic number");
  uint32_t found = read_be32(bytes.data());
  if (found != magic) {
    std::string hint;
    if (found == images_magic)
      hint = "; this looks like an IDX image file";
    else if (found == labels_magic)
      hint = "; this looks like an IDX label file";
    return format_error(path, "wrong magic number " + std::to_string(found) + ", expected "
                                + std::to_string(magic) + " (" + kind + ")" + hint);
  }
  if (bytes.size() < header_size)
    return format_error(path, "truncated IDX header: " + std::to_string(bytes.size())
                                + " bytes, need " + std::to_string(header_size));
  return bytes;
}

// Checks that the `payload` bytes after the header hold exactly `count` items
// of `item_size` bytes; `items` names them for the message ("labels").
status check_payload(const std::string& path, uint64_t payload, uint64_t count,
                     uint64_t item_size, const std::string& items) {
  if (payload == 0)
    return format_error(path, "truncated: the header promises " + std::to_string(count)
                                + " " + items + " but no data follows it");
  if (payload < item_size)
    return format_error(path, "wrong dimensions: one of the " + items + " needs "
                                + std::to_string(item_size) + " bytes but only "
                                + std::to_string(payload)
                                + " bytes follow the header (truncated, or the "
                                  "dimensions are wrong)");
  // Divides rather than multiplies: count * item_size may overflow 64 bits.
  if (count > payload / item_size)
    return format_error(path, "truncated: the header promises " + std::to_string(count)
                                + " " + items + " but only " + std::to_string(payload)
                                + " bytes follow, enough for "
                                + std::to_string(payload / item_size));
  uint64_t needed = count * item_size;
  if (payload > needed)
    return format_error(path, std::to_string(payload - needed)
                                + " trailing bytes after the " + std::to_string(count)
                                + " " + items + " the header promises");
  return {};
}

} // namespace

expected<idx_images> read_idx_images(const std::string& path) {
  auto bytes = read_idx_bytes(path, images_magic, images_header_size, "IDX images");
  if (!bytes)
    return bytes.error();
  const uint8_t* header = bytes->data();
  uint64_t count = read_be32(header + 4);
  uint64_t rows = read_be32(header + 8);
  uint64_t cols = read_be32(header + 12);
  std::string dims = std::to_string(rows) + "x" + std::to_string(cols);
  if (count == 0)
    return format_error(path, "wrong dimensions: the header says 0 images");
  if (rows == 0 || cols == 0)
    return format_error(path, "wrong dimensions: images of " + dims
                                + " (zero rows or cols)");
  auto ok = check_payload(path, bytes->size() - images_header_size, count, rows * cols,
                          "images of " + dims);
  if (!ok)
    return ok.error();
  // The sizes must fit the int fields of idx_images and dataset.
  if (count * rows * cols > INT_MAX)
    return format_error(path, std::to_string(count) + " images of " + dims
                                + " are too many: over INT_MAX pixels");
  idx_images result;
  result.count = static_cast<int>(count);
  result.rows = static_cast<int>(rows);
  result.cols = static_cast<int>(cols);
  result.pixels.assign(bytes->begin() + images_header_size, bytes->end());
  return result;
}

expected<std::vector<uint8_t>> read_idx_labels(const std::string& path) {
  auto bytes = read_idx_bytes(path, labels_magic, labels_header_size, "IDX labels");
  if (!bytes)
    return bytes.error();
  uint64_t count = read_be32(bytes->data() + 4);
  if (count == 0)
    return format_error(path, "wrong dimensions: the header says 0 labels");
  auto ok = check_payload(path, bytes->size() - labels_header_size, count, 1, "labels");
  if (!ok)
    return ok.error();
  if (count > INT_MAX)
    return format_error(path, std::to_string(count) + " labels are too many: over INT_MAX");
  return std::vector<uint8_t>(bytes->begin() + labels_header_size, bytes->end());
}

} // namespace troupe::detail
