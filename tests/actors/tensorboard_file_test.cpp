// The TensorBoard event file: CRC-32C against RFC 3720's vectors, and files
// read back record by record through TFRecord framing and the Event class.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

#include "actors/report/crc32c.hpp"
#include "actors/report/tensorboard_event.pb.h"
#include "actors/report/tensorboard_file.hpp"
#include "messages/errors.hpp"
#include "tests/actors/tfrecord_reader.hpp"
#include "tests/temp_dir.hpp"

using namespace troupe;
using namespace troupe::testing;

namespace {

using scalars = std::vector<std::pair<std::string, float>>;

// What the tests write: three steps of loss and accuracy, a second apart.
const std::vector<std::pair<int64_t, scalars>> steps = {
  {1, {{"loss", 2.25f}, {"accuracy", 0.125f}}},
  {2, {{"loss", 0.5f}, {"accuracy", 0.75f}}},
  {10, {{"loss", 0.0625f}, {"accuracy", 0.9375f}, {"test/loss", 1e-7f}}},
};
constexpr double opened_at = 1700000000.25;

tensorboard_file written_file(const std::string& dir) {
  auto file = tensorboard_file::open(dir, opened_at);
  REQUIRE(file);
  for (std::size_t i = 0; i < steps.size(); ++i)
    REQUIRE_FALSE(file->write_scalars(steps[i].first, opened_at + 1.0 + i, steps[i].second));
  return std::move(*file);
}

tensorboard::Event parsed(const std::string& record) {
  tensorboard::Event event;
  REQUIRE(event.ParseFromString(record));
  return event;
}

std::string host_name() {
  char name[256] = {};
  REQUIRE(gethostname(name, sizeof(name) - 1) == 0);
  return name;
}

} // namespace

TEST_CASE("CRC-32C gives the iSCSI test vectors of RFC 3720", "[report][tensorboard][crc32c]") {
  const std::string digits = "123456789";
  CHECK(crc32c(digits.data(), digits.size()) == 0xE3069283u);
  const std::vector<unsigned char> zeros(32, 0x00);
  CHECK(crc32c(zeros.data(), zeros.size()) == 0x8A9136AAu);
  const std::vector<unsigned char> ones(32, 0xFF);
  CHECK(crc32c(ones.data(), ones.size()) == 0x62A8AB43u);
  std::vector<unsigned char> ascending(32);
  for (std::size_t i = 0; i < ascending.size(); ++i)
    ascending[i] = static_cast<unsigned char>(i);
  CHECK(crc32c(ascending.data(), ascending.size()) == 0x46DD794Eu);
  const std::vector<unsigned char> descending(ascending.rbegin(), ascending.rend());
  CHECK(crc32c(descending.data(), descending.size()) == 0x113FDB5Cu);
  CHECK(crc32c(nullptr, 0) == 0u);
}

TEST_CASE("the TFRecord mask rotates a CRC right by 15 bits and adds 0xa282ead8",
          "[report][tensorboard][crc32c]") {
  CHECK(mask_crc32c(0) == 0xa282ead8u);
  CHECK(mask_crc32c(1u << 15) == 0xa282ead9u);
  CHECK(mask_crc32c(1) == 0xa284ead8u);
  CHECK(mask_crc32c(0xE3069283u) == masked(0xE3069283u));
}

TEST_CASE("an event file holds its version record, then one record of scalars per write",
          "[report][tensorboard]") {
  temp_dir dir;
  const auto file = written_file((dir.path / "run" / "sync").string());
  const auto name = "events.out.tfevents.1700000000." + host_name();
  CHECK(file.path() == (dir.path / "run" / "sync" / name).string());

  const auto read = read_tfrecords(file_bytes(file.path()));
  REQUIRE(read.damage.empty());
  REQUIRE(read.records.size() == 1 + steps.size());
  const auto first = parsed(read.records[0]);
  CHECK(first.what_case() == tensorboard::Event::kFileVersion);
  CHECK(first.file_version() == "brain.Event:2");
  CHECK(first.wall_time() == opened_at);
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const auto event = parsed(read.records[1 + i]);
    CHECK(event.step() == steps[i].first);
    CHECK(event.wall_time() == opened_at + 1.0 + i);
    REQUIRE(event.what_case() == tensorboard::Event::kSummary);
    const auto& written = steps[i].second;
    REQUIRE(event.summary().value_size() == static_cast<int>(written.size()));
    for (std::size_t v = 0; v < written.size(); ++v) {
      const auto& value = event.summary().value(static_cast<int>(v));
      CHECK(value.tag() == written[v].first);
      CHECK(value.value_case() == tensorboard::Summary::Value::kSimpleValue);
      CHECK(value.simple_value() == written[v].second);
    }
  }
}

TEST_CASE("each write is in the file when write_scalars returns", "[report][tensorboard]") {
  temp_dir dir;
  auto file = tensorboard_file::open(dir.path.string(), opened_at);
  REQUIRE(file);
  CHECK(read_tfrecords(file_bytes(file->path())).records.size() == 1);
  for (std::size_t i = 0; i < steps.size(); ++i) {
    REQUIRE_FALSE(file->write_scalars(steps[i].first, opened_at + 1.0 + i, steps[i].second));
    const auto read = read_tfrecords(file_bytes(file->path()));
    CHECK(read.damage.empty());
    CHECK(read.records.size() == 2 + i);
  }
}

TEST_CASE("the reader finds every flipped byte and every cut inside a record",
          "[report][tensorboard]") {
  temp_dir dir;
  const auto bytes = file_bytes(written_file(dir.path.string()).path());
  std::vector<std::size_t> boundaries;
  for (std::size_t at = 0; at < bytes.size();) {
    boundaries.push_back(at);
    at += 16 + little_endian(bytes, at, 8);
  }
  REQUIRE(boundaries.size() == 1 + steps.size());

  for (std::size_t at = 0; at < bytes.size(); ++at) {
    auto flipped = bytes;
    flipped[at] = static_cast<char>(flipped[at] ^ 0x01);
    INFO("byte " << at << " flipped");
    CHECK_FALSE(read_tfrecords(flipped).damage.empty());
  }
  auto in_data = bytes;
  in_data[boundaries[1] + 12] = static_cast<char>(in_data[boundaries[1] + 12] ^ 0x80);
  CHECK(read_tfrecords(in_data).damage == "data CRC mismatch at byte "
                                            + std::to_string(boundaries[1]));
  CHECK(read_tfrecords(in_data).records.size() == 1);

  for (std::size_t size = 1; size < bytes.size(); ++size) {
    const bool at_boundary =
      std::find(boundaries.begin(), boundaries.end(), size) != boundaries.end();
    INFO("cut to " << size << " bytes");
    CHECK(read_tfrecords(bytes.substr(0, size)).damage.empty() == at_boundary);
  }
}

TEST_CASE("a directory that cannot be made is a bad_config error naming it",
          "[report][tensorboard]") {
  temp_dir dir;
  std::filesystem::create_directories(dir.path);
  const auto plain_file = (dir.path / "not_a_directory").string();
  std::ofstream(plain_file) << "a file, not a directory\n";

  for (const auto& target : {plain_file + "/runs", plain_file}) {
    const auto file = tensorboard_file::open(target, opened_at);
    REQUIRE_FALSE(file);
    CHECK(file.error() == make_error(troupe_errc::bad_config));
    INFO(describe(file.error()));
    CHECK(describe(file.error()).find(target) != std::string::npos);
    CHECK(describe(file.error()).find("Not a directory") != std::string::npos);
  }
}

TEST_CASE("a second file of the same second and host gets a name of its own, the first one "
          "kept",
          "[report][tensorboard]") {
  temp_dir dir;
  const auto first = written_file(dir.path.string());
  const auto second = tensorboard_file::open(dir.path.string(), opened_at + 0.5);
  REQUIRE(second);
  CHECK(second->path() == first.path() + ".1");
  CHECK(read_tfrecords(file_bytes(first.path())).records.size() == 1 + steps.size());
  CHECK(read_tfrecords(file_bytes(second->path())).records.size() == 1);
}

TEST_CASE("a tag that is not UTF-8 is a bad_data error and writes nothing",
          "[report][tensorboard]") {
  temp_dir dir;
  auto file = tensorboard_file::open(dir.path.string(), opened_at);
  REQUIRE(file);
  for (const std::string tag : {"\xff", "lo\xc3", "\xc0\xaf", "\xed\xa0\x80"}) {
    const auto err = file->write_scalars(1, opened_at, {{"loss", 1.0f}, {tag, 2.0f}});
    CHECK(err == make_error(troupe_errc::bad_data));
  }
  const std::string accented = "m\xc3\xa9trique/\xc3\xa9poque \xe2\x88\x91";
  REQUIRE_FALSE(file->write_scalars(1, opened_at, {{accented, 1.0f}}));
  const auto read = read_tfrecords(file_bytes(file->path()));
  REQUIRE(read.records.size() == 2);
  CHECK(parsed(read.records[1]).summary().value(0).tag() == accented);
}
