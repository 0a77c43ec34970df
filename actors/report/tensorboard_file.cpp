// TensorBoard event records (generated protobuf classes) in TFRecord framing:
// uint64 length, its masked CRC-32C, the bytes, their masked CRC-32C.
#include "actors/report/tensorboard_file.hpp"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <system_error>

#include <unistd.h>

#include <fmt/core.h>

#include "actors/report/crc32c.hpp"
#include "actors/report/tensorboard_event.pb.h"
#include "messages/errors.hpp"

namespace troupe::detail {

namespace {

caf::error option_error(troupe_errc code, const std::string& why) {
  return make_troupe_error(code, "--tensorboard: " + why);
}

std::string host_name() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0 || name[0] == '\0')
    return "localhost";
  return name;
}

void append_le(std::string& out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i)
    out.push_back(static_cast<char>((value >> (8 * i)) & 0xFFu));
}

std::string framed(const std::string& data) {
  std::string record;
  record.reserve(data.size() + 16);
  append_le(record, data.size(), 8);
  append_le(record, mask_crc32c(crc32c(record.data(), 8)), 4);
  record += data;
  append_le(record, mask_crc32c(crc32c(data.data(), data.size())), 4);
  return record;
}

// A lead byte of a multi-byte UTF-8 sequence: (lead & mask) == bits, then
// `extra` continuation bytes, encoding a code point of at least `least`.
struct utf8_lead {
  unsigned char mask;
  unsigned char bits;
  std::size_t extra;
  uint32_t least;
};

constexpr utf8_lead utf8_leads[] = {{0xE0, 0xC0, 1, 0x80}, {0xF0, 0xE0, 2, 0x800},
                                    {0xF8, 0xF0, 3, 0x10000}};

// Proto3 strings must be UTF-8: TensorBoard refuses to parse a record whose
// tag is not, and with it the rest of the file.
bool is_utf8(const std::string& text) {
  std::size_t i = 0;
  while (i < text.size()) {
    const auto lead = static_cast<unsigned char>(text[i]);
    if (lead < 0x80) {
      ++i;
      continue;
    }
    const utf8_lead* kind = nullptr;
    for (const auto& candidate : utf8_leads)
      if ((lead & candidate.mask) == candidate.bits)
        kind = &candidate;
    if (kind == nullptr || text.size() - i <= kind->extra)
      return false;
    uint32_t code = lead & static_cast<unsigned char>(~kind->mask);
    for (std::size_t k = 1; k <= kind->extra; ++k) {
      const auto next = static_cast<unsigned char>(text[i + k]);
      if ((next & 0xC0u) != 0x80u)
        return false;
      code = (code << 6) | (next & 0x3Fu);
    }
    if (code < kind->least || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF))
      return false;
    i += kind->extra + 1;
  }
  return true;
}

caf::error make_directory(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (!ec && !std::filesystem::is_directory(dir, ec) && !ec)
    ec = std::make_error_code(std::errc::not_a_directory);
  if (ec)
    return option_error(troupe_errc::bad_config,
                        "cannot create the directory " + dir + ": " + ec.message());
  return {};
}

} // namespace

tensorboard_file::tensorboard_file(std::FILE* file, std::string path)
  : file_(file, &std::fclose), path_(std::move(path)) {
}

caf::expected<tensorboard_file> tensorboard_file::open(const std::string& dir, double wall_time) {
  if (auto err = make_directory(dir))
    return err;
  const auto name = fmt::format("events.out.tfevents.{:010}.{}",
                                static_cast<int64_t>(wall_time), host_name());
  const auto first_path = (std::filesystem::path(dir) / name).string();
  // "x": two writers never share, nor truncate, one file; one of the same
  // second and host gets the next free ".N" after the name.
  auto path = first_path;
  std::FILE* file = std::fopen(path.c_str(), "wbx");
  for (int n = 1; file == nullptr && errno == EEXIST && n < 1000; ++n) {
    path = first_path + "." + std::to_string(n);
    file = std::fopen(path.c_str(), "wbx");
  }
  if (file == nullptr)
    return option_error(troupe_errc::bad_config,
                        "cannot create " + path + ": " + std::strerror(errno));
  tensorboard_file result(file, std::move(path));
  troupe::tensorboard::Event first;
  first.set_wall_time(wall_time);
  first.set_file_version("brain.Event:2");
  if (auto err = result.write_record(first.SerializeAsString()))
    return err;
  return result;
}

caf::expected<tensorboard_file> tensorboard_file::open(const std::string& dir) {
  using seconds = std::chrono::duration<double>;
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  return open(dir, std::chrono::duration_cast<seconds>(now).count());
}

caf::error
tensorboard_file::write_scalars(int64_t step, double wall_time,
                                const std::vector<std::pair<std::string, float>>& values) {
  troupe::tensorboard::Event event;
  event.set_wall_time(wall_time);
  event.set_step(step);
  auto* summary = event.mutable_summary();
  for (const auto& [tag, value] : values) {
    if (!is_utf8(tag))
      return option_error(troupe_errc::bad_data,
                          "a tag of step " + std::to_string(step) + " is not UTF-8 text");
    auto* entry = summary->add_value();
    entry->set_tag(tag);
    entry->set_simple_value(value);
  }
  return write_record(event.SerializeAsString());
}

caf::error tensorboard_file::write_record(const std::string& data) {
  if (failed_)
    return failed_;
  const auto record = framed(data);
  if (std::fwrite(record.data(), 1, record.size(), file_.get()) != record.size()
      || std::fflush(file_.get()) != 0)
    failed_ = option_error(troupe_errc::bad_config,
                           "cannot write " + path_ + ": " + std::strerror(errno));
  return failed_;
}

} // namespace troupe::detail
