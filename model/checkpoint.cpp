// The checkpoint file format: a 40-byte header, then a payload of raw fields,
// each part guarded by CRC-32; written through a synced temporary and rename.
#include "model/checkpoint.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <system_error>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "model/atomic_write.hpp"
#include "model/model_spec.hpp"

namespace troupe::detail {

namespace {

// Header layout (fields raw in host order; the two check fields make a
// reader whose byte order or float format differs refuse the file):
//   0  char[8]  magic "TROUPECK"
//   8  uint32   0x01020304
//   12 float    1.0f
//   16 uint32   format version
//   20 uint32   CRC-32 of the payload
//   24 uint64   payload size in bytes
//   32 uint32   reserved, 0
//   36 uint32   CRC-32 of bytes 0..35
// Payload: uint64 config_fingerprint, version, round, epoch, epoch_round,
// epoch_complete (0 or 1), optimizer_steps; then model and optimizer as
// uint64 length + bytes; then params and optimizer_state as uint64 count +
//
// floats; then (version 3) the settings as uint64 length + "name=value\n" lines;
// then (version 4) the learning-rate factor as uint64 count (1) + a float;
// then (version 5) the replicas' int8 residuals as uint64 count + floats.
//
// Versions: 2 added epoch_complete, 3 the settings, 4 the learning-rate
// factor, 5 the residuals. This build writes 5 and reads 1 to 5; a version 1 file reads with epoch_complete false (the resume
// then compares epoch_round with the epoch's rounds, as version 1 runs did).
constexpr char magic[8] = {'T', 'R', 'O', 'U', 'P', 'E', 'C', 'K'};
constexpr uint32_t byte_order_check = 0x01020304;
constexpr float float_check = 1.0f;
constexpr uint32_t format_version = 5;
constexpr uint32_t oldest_format_version = 1;
constexpr size_t header_size = 40;
constexpr size_t header_crc_offset = 36;

static_assert(std::numeric_limits<float>::is_iec559, "checkpoints store IEEE floats");

using bytes = std::vector<unsigned char>;

std::string errno_text(int err) {
  return std::error_code(err, std::generic_category()).message();
}

error bad_format(const std::string& path, const std::string& what) {
  return fail(errc::bad_data, path + ": " + what);
}

// zlib takes uInt lengths, so feed it in chunks for files over 4 GiB.
uint32_t crc32_of(const unsigned char* data, size_t size) {
  uLong crc = crc32(0L, Z_NULL, 0);
  while (size > 0) {
    auto chunk = static_cast<uInt>(std::min<size_t>(size, 1u << 30));
    crc = crc32(crc, data, chunk);
    data += chunk;
    size -= chunk;
  }
  return static_cast<uint32_t>(crc);
}

template <class T>
void put(bytes& out, const T& value) {
  auto p = reinterpret_cast<const unsigned char*>(&value);
  out.insert(out.end(), p, p + sizeof(T));
}

template <class T>
void put_at(bytes& out, size_t offset, const T& value) {
  std::memcpy(out.data() + offset, &value, sizeof(T));
}

template <class T>
T get_at(const bytes& in, size_t offset) {
  T value;
  std::memcpy(&value, in.data() + offset, sizeof(T));
  return value;
}

void put_string(bytes& out, const std::string& text) {
  put<uint64_t>(out, text.size());
  out.insert(out.end(), text.begin(), text.end());
}

void put_floats(bytes& out, const std::vector<float>& values) {
  put<uint64_t>(out, values.size());
  auto p = reinterpret_cast<const unsigned char*>(values.data());
  out.insert(out.end(), p, p + values.size() * sizeof(float));
}

// "name=value\n" per setting; a value has no newline (option values are one line).
std::string settings_lines(const std::vector<setting_text>& settings) {
  std::string text;
  for (const auto& s : settings)
    text += s.name + "=" + s.value + "\n";
  return text;
}

bytes encode(const checkpoint& c) {
  bytes out;
  out.reserve(header_size + 7 * 8 + 16 + c.model.size() + c.optimizer.size() + 16
              + (c.params.size() + c.optimizer_state.size() + c.residuals.size()) * sizeof(float));
  out.resize(header_size);
  put(out, c.config_fingerprint);
  put(out, c.version);
  put(out, c.round);
  put(out, c.epoch);
  put(out, c.epoch_round);
  put<uint64_t>(out, c.epoch_complete ? 1 : 0);
  put(out, c.optimizer_steps);
  put_string(out, c.model);
  put_string(out, c.optimizer);
  put_floats(out, c.params);
  put_floats(out, c.optimizer_state);
  put_string(out, settings_lines(c.settings));
  put_floats(out, std::vector<float>{c.learning_rate_factor});
  put_floats(out, c.residuals);

  const size_t payload_size = out.size() - header_size;
  std::memcpy(out.data(), magic, sizeof(magic));
  put_at(out, 8, byte_order_check);
  put_at(out, 12, float_check);
  put_at(out, 16, format_version);
  put_at(out, 20, crc32_of(out.data() + header_size, payload_size));
  put_at<uint64_t>(out, 24, payload_size);
  put_at<uint32_t>(out, 32, 0);
  put_at(out, header_crc_offset, crc32_of(out.data(), header_crc_offset));
  return out;
}

// Reads payload fields in order; every read is bounds-checked, so lengths that
// lie (in a file whose checksum still matches) give an error, not a crash.
class payload_reader {
public:
  payload_reader(const bytes& in, const std::string& path)
    : in_(in), path_(path), pos_(header_size) {}

  expected<uint64_t> u64(const char* field) {
    if (in_.size() - pos_ < sizeof(uint64_t))
      return malformed(std::string("payload ends inside field ") + field);
    auto value = get_at<uint64_t>(in_, pos_);
    pos_ += sizeof(uint64_t);
    return value;
  }

  expected<std::string> text(const char* field) {
    auto size = u64(field);
    if (!size)
      return size.error();
    if (*size > in_.size() - pos_)
      return malformed(std::string(field) + " claims " + std::to_string(*size) + " bytes, "
                       + std::to_string(in_.size() - pos_) + " remain");
    std::string value(reinterpret_cast<const char*>(in_.data() + pos_), *size);
    pos_ += *size;
    return value;
  }

  expected<std::vector<float>> floats(const char* field) {
    auto count = u64(field);
    if (!count)
      return count.error();
    if (*count > (in_.size() - pos_) / sizeof(float))
      return malformed(std::string(field) + " claims " + std::to_string(*count) + " floats, "
                       + std::to_string(in_.size() - pos_) + " bytes remain");
    std::vector<float> values(*count);
    if (*count > 0) // memcpy with a null pointer is undefined even for 0 bytes
      std::memcpy(values.data(), in_.data() + pos_, *count * sizeof(float));
    pos_ += *count * sizeof(float);
    return values;
  }

  size_t remaining() const { return in_.size() - pos_; }

  error malformed(const std::string& what) const {
    return bad_format(path_, "malformed payload: " + what);
  }

private:
  const bytes& in_;
  const std::string& path_;
  size_t pos_;
};

expected<std::vector<setting_text>> parse_settings_lines(const std::string& text,
                                                         const payload_reader& reader) {
  std::vector<setting_text> settings;
  size_t start = 0;
  while (start < text.size()) {
    const auto end = text.find('\n', start);
    const auto equals = text.find('=', start);
    if (end == std::string::npos || equals == std::string::npos || equals > end)
      return reader.malformed("settings line " + std::to_string(settings.size() + 1)
                              + " is not name=value");
    settings.push_back(setting_text{text.substr(start, equals - start),
                                    text.substr(equals + 1, end - equals - 1)});
    start = end + 1;
  }
  return settings;
}

// The integer fields, in their order, each from the format version that
// added it on.
status decode_integers(payload_reader& reader, uint32_t file_version, checkpoint& c) {
  uint64_t epoch_complete = 0;
  struct integer_field {
    uint64_t* target;
    const char* name;
    uint32_t since;
  };
  const integer_field integers[] = {
    {&c.config_fingerprint, "config_fingerprint", 1},
    {&c.version, "version", 1},
    {&c.round, "round", 1},
    {&c.epoch, "epoch", 1},
    {&c.epoch_round, "epoch_round", 1},
    {&epoch_complete, "epoch_complete", 2},
    {&c.optimizer_steps, "optimizer_steps", 1},
  };
  for (const auto& field : integers) {
    if (file_version < field.since)
      continue;
    auto value = reader.u64(field.name);
    if (!value)
      return value.error();
    *field.target = *value;
  }
  if (epoch_complete > 1)
    return reader.malformed("epoch_complete is " + std::to_string(epoch_complete)
                            + ", not 0 or 1");
  c.epoch_complete = epoch_complete == 1;
  return {};
}

// The fields later format versions added after the optimizer state.
status decode_later_fields(payload_reader& reader, uint32_t file_version, checkpoint& c) {
  if (file_version >= 3) {
    auto lines = reader.text("settings");
    if (!lines)
      return lines.error();
    auto settings = parse_settings_lines(*lines, reader);
    if (!settings)
      return settings.error();
    c.settings = std::move(*settings);
  }
  if (file_version >= 4) {
    auto factor = reader.floats("learning_rate_factor");
    if (!factor)
      return factor.error();
    if (factor->size() != 1 || !(std::isfinite(factor->front()) && factor->front() > 0.0f))
      return reader.malformed("the learning-rate factor is not one positive float");
    c.learning_rate_factor = factor->front();
  }
  if (file_version >= 5) {
    auto residuals = reader.floats("residuals");
    if (!residuals)
      return residuals.error();
    c.residuals = std::move(*residuals);
  }
  return {};
}

expected<checkpoint> decode_payload(const bytes& in, const std::string& path) {
  payload_reader reader(in, path);
  checkpoint c;
  const auto file_version = get_at<uint32_t>(in, 16); // validate() accepted it
  if (auto ok = decode_integers(reader, file_version, c); !ok)
    return ok.error();
  auto model = reader.text("model");
  if (!model)
    return model.error();
  c.model = std::move(*model);
  auto optimizer = reader.text("optimizer");
  if (!optimizer)
    return optimizer.error();
  c.optimizer = std::move(*optimizer);
  auto params = reader.floats("params");
  if (!params)
    return params.error();
  c.params = std::move(*params);
  auto state = reader.floats("optimizer_state");
  if (!state)
    return state.error();
  c.optimizer_state = std::move(*state);
  if (auto ok = decode_later_fields(reader, file_version, c); !ok)
    return ok.error();
  if (reader.remaining() != 0)
    return reader.malformed(std::to_string(reader.remaining())
                            + " bytes left over after the last field");
  return c;
}

// Checks the header and the payload size and checksum; the payload itself is
// decoded afterwards.
status validate(const bytes& in, const std::string& path) {
  const size_t check = std::min(in.size(), sizeof(magic));
  if (check > 0 && std::memcmp(in.data(), magic, check) != 0)
    return bad_format(path, "not a Troupe checkpoint: the file does not start with \"TROUPECK\"");
  if (in.size() < header_size)
    return bad_format(path, "truncated: " + std::to_string(in.size()) + " bytes, shorter than the "
                              + std::to_string(header_size) + "-byte header");
  if (get_at<uint32_t>(in, 8) != byte_order_check || std::memcmp(in.data() + 12, &float_check, 4) != 0)
    return bad_format(path, "written with another byte order or float format than this "
                            "machine's (or the header is corrupt)");
  const auto file_version = get_at<uint32_t>(in, 16);
  if (file_version < oldest_format_version || file_version > format_version)
    return bad_format(path, "unknown format version " + std::to_string(file_version)
                              + " (this build reads versions "
                              + std::to_string(oldest_format_version) + " to "
                              + std::to_string(format_version) + ")");
  if (get_at<uint32_t>(in, header_crc_offset) != crc32_of(in.data(), header_crc_offset)
      || get_at<uint32_t>(in, 32) != 0)
    return bad_format(path, "header checksum mismatch: the file is corrupt");
  const auto payload_size = get_at<uint64_t>(in, 24);
  const size_t actual = in.size() - header_size;
  if (payload_size > actual)
    return bad_format(path, "truncated: " + std::to_string(in.size()) + " bytes, header promises "
                              + std::to_string(header_size + payload_size));
  if (payload_size < actual)
    return bad_format(path, std::to_string(actual - payload_size)
                              + " trailing bytes after the " + std::to_string(header_size + payload_size)
                              + " the header promises");
  if (get_at<uint32_t>(in, 20) != crc32_of(in.data() + header_size, actual))
    return bad_format(path, "checksum mismatch: the file is corrupt");
  return {};
}

expected<bytes> read_all(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return fail(errc::io, path + ": cannot open checkpoint: " + errno_text(errno));
  struct stat info {};
  if (::fstat(fd, &info) != 0 || S_ISDIR(info.st_mode)) {
    const int err = S_ISDIR(info.st_mode) ? EISDIR : errno;
    ::close(fd);
    return fail(errc::io, path + ": cannot read checkpoint: " + errno_text(err));
  }
  bytes in(static_cast<size_t>(info.st_size) + 1);
  size_t used = 0;
  for (;;) {
    if (used == in.size())
      in.resize(in.size() * 2);
    const ssize_t n = ::read(fd, in.data() + used, in.size() - used);
    if (n == 0)
      break;
    if (n < 0) {
      if (errno == EINTR)
        continue;
      const int err = errno;
      ::close(fd);
      return fail(errc::io, path + ": cannot read checkpoint: " + errno_text(err));
    }
    used += static_cast<size_t>(n);
  }
  ::close(fd);
  in.resize(used);
  return in;
}

} // namespace

expected<size_t> write_checkpoint(const std::string& path, const checkpoint& c) {
  const bytes out = encode(c);
  if (auto written = write_file_atomically(path, out.data(), out.size()); !written)
    return written.error();
  return out.size();
}

expected<checkpoint> read_checkpoint(const std::string& path) {
  auto in = read_all(path);
  if (!in)
    return in.error();
  auto valid = validate(*in, path);
  if (!valid)
    return valid.error();
  return decode_payload(*in, path);
}

uint64_t settings_fingerprint(const std::vector<setting_text>& settings) {
  const auto text = settings_lines(settings);
  return fnv1a64(text.data(), text.size());
}

} // namespace troupe::detail
