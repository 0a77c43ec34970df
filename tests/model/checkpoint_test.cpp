// Tests for the checkpoint file: round trips, atomic replacement, and every
// kind of damaged or mismatched file refused with a clear error.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

#include "model/checkpoint.hpp"
#include "tests/temp_dir.hpp"

namespace fs = std::filesystem;
using namespace troupe;

namespace {

using bytes = std::vector<unsigned char>;

using testing::temp_dir;

// The settings a checkpoint of sample() records, and their length on disk.
const std::vector<setting_text> sample_settings{
  {"mode", "sync"}, {"replicas", "2"}, {"seed", "42"}, {"lr", "0.001"}};
const size_t sample_settings_bytes = 8 + std::string("mode=sync\nreplicas=2\nseed=42\nlr=0.001\n").size();
const size_t rate_factor_bytes = 8 + sizeof(float); // format 4's last field
const size_t no_residuals_bytes = 8; // format 5's last field: a count of 0

checkpoint sample(size_t parameter_count = 1000, float offset = 0.0f) {
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

bytes load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return bytes(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void save(const std::string& path, const bytes& content) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(content.data()),
            static_cast<std::streamsize>(content.size()));
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// The standard CRC-32 (zlib's), written out so that the tests can forge files
// whose checksums match and check that the format uses the standard CRC.
uint32_t reference_crc32(const unsigned char* data, size_t size) {
  uint32_t crc = 0xffffffffu;
  for (size_t i = 0; i < size; ++i) {
    crc ^= data[i];
    for (int bit = 0; bit < 8; ++bit)
      crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

// Recomputes both checksums of a file image after a test edited it.
void reseal(bytes& file) {
  uint64_t payload_size = file.size() - 40;
  std::memcpy(file.data() + 24, &payload_size, 8);
  uint32_t payload_crc = reference_crc32(file.data() + 40, file.size() - 40);
  std::memcpy(file.data() + 20, &payload_crc, 4);
  uint32_t header_crc = reference_crc32(file.data(), 36);
  std::memcpy(file.data() + 36, &header_crc, 4);
}

std::string message_of(const expected<checkpoint>& result) {
  return result ? std::string("(read succeeded)") : result.error().message;
}

} // namespace

TEST_CASE("a checkpoint reads back equal field by field and bit for bit", "[checkpoint]") {
  temp_dir dir;
  const auto path = dir.file("run.ckpt");
  auto c = sample();
  // Values a text format would lose or mangle must survive.
  c.params[0] = -0.0f;
  c.params[1] = std::numeric_limits<float>::denorm_min();
  c.params[2] = std::numeric_limits<float>::infinity();
  c.params[3] = std::numeric_limits<float>::quiet_NaN();
  c.params[4] = std::nextafter(1.0f, 2.0f);
  c.epoch_complete = true; // sample() leaves it false: the field must travel
  c.learning_rate_factor = 0.25f;

  auto written = write_checkpoint(path, c);
  REQUIRE(written);
  CHECK(*written == fs::file_size(path));

  auto back = read_checkpoint(path);
  REQUIRE(back);
  CHECK(back->model == c.model);
  CHECK(back->config_fingerprint == c.config_fingerprint);
  CHECK(back->settings == c.settings);
  CHECK(back->version == c.version);
  CHECK(back->round == c.round);
  CHECK(back->epoch == c.epoch);
  CHECK(back->epoch_round == c.epoch_round);
  CHECK(back->epoch_complete);
  CHECK(back->optimizer == c.optimizer);
  CHECK(back->optimizer_steps == c.optimizer_steps);
  CHECK(same_bits(back->params, c.params));
  CHECK(same_bits(back->optimizer_state, c.optimizer_state));
  CHECK(back->learning_rate_factor == 0.25f);
}

TEST_CASE("a format 3 file, from before the learning-rate factor, loads with a factor of 1",
          "[checkpoint]") {
  temp_dir dir;
  const auto path = dir.file("run.ckpt");
  auto c = sample(10);
  c.learning_rate_factor = 0.5f;
  REQUIRE(write_checkpoint(path, c));
  auto file = load(path);
  file.resize(file.size() - rate_factor_bytes - no_residuals_bytes);
  uint32_t version = 3;
  std::memcpy(file.data() + 16, &version, 4);
  reseal(file);
  save(path, file);
  auto back = read_checkpoint(path);
  REQUIRE(back);
  CHECK(back->learning_rate_factor == 1.0f);
  CHECK(back->settings == c.settings);
  CHECK(same_bits(back->params, c.params));
}

TEST_CASE("the replicas' int8 residuals round trip, and a format 4 file, from before them, "
          "loads without any",
          "[checkpoint]") {
  temp_dir dir;
  const auto path = dir.file("run.ckpt");
  auto c = sample(10);
  c.residuals = {0.25f, -0.125f, 3e-8f, 0.0f, -1.5f, 7.0f};
  REQUIRE(write_checkpoint(path, c));
  auto back = read_checkpoint(path);
  REQUIRE(back);
  CHECK(same_bits(back->residuals, c.residuals));
  auto file = load(path);
  file.resize(file.size() - (8 + c.residuals.size() * sizeof(float)));
  uint32_t version = 4;
  std::memcpy(file.data() + 16, &version, 4);
  reseal(file);
  save(path, file);
  auto older = read_checkpoint(path);
  REQUIRE(older);
  CHECK(older->residuals.empty());
  CHECK(same_bits(older->params, c.params));
}

TEST_CASE("a learning-rate factor that is not positive is refused", "[checkpoint]") {
  temp_dir dir;
  const auto path = dir.file("run.ckpt");
  REQUIRE(write_checkpoint(path, sample(10)));
  auto file = load(path);
  const float zero = 0.0f;
  std::memcpy(file.data() + file.size() - no_residuals_bytes - sizeof(float), &zero,
              sizeof(float));
  reseal(file);
  save(path, file);
  auto result = read_checkpoint(path);
  REQUIRE_FALSE(result);
  CHECK_THAT(result.error().message, Catch::Contains("learning-rate factor"));
}

TEST_CASE("an empty checkpoint round trips too", "[checkpoint]") {
  temp_dir dir;
  const auto path = dir.file("empty.ckpt");
  checkpoint c;
  REQUIRE(write_checkpoint(path, c));
  auto back = read_checkpoint(path);
  REQUIRE(back);
  CHECK(back->model.empty());
  CHECK(back->optimizer.empty());
  CHECK(back->params.empty());
  CHECK(back->optimizer_state.empty());
  CHECK(back->version == 0);
  CHECK_FALSE(back->epoch_complete);
}

TEST_CASE("the file starts with the documented header and standard CRC-32", "[checkpoint]") {
  temp_dir dir;
  const auto path = dir.file("run.ckpt");
  REQUIRE(write_checkpoint(path, sample(10)));
  auto file = load(path);
  REQUIRE(file.size() > 40);
  CHECK(std::string(file.begin(), file.begin() + 8) == "TROUPECK");
  uint32_t version = 0;
  std::memcpy(&version, file.data() + 16, 4);
  CHECK(version == 5);
  uint64_t payload_size = 0;
  std::memcpy(&payload_size, file.data() + 24, 8);
  CHECK(payload_size + 40 == file.size());
  auto resealed = file;
  reseal(resealed);
  CHECK(resealed == file);
}

TEST_CASE("writing replaces an older checkpoint and leaves no temporary file", "[checkpoint]") {
  temp_dir dir;
  const auto path = dir.file("run.ckpt");
  REQUIRE(write_checkpoint(path, sample(1000, 0.0f)));
  auto newer = sample(500, 1.0f);
  newer.round = 9000;
  REQUIRE(write_checkpoint(path, newer));

  CHECK(dir.names() == std::vector<std::string>{"run.ckpt"});
  auto back = read_checkpoint(path);
  REQUIRE(back);
  CHECK(back->round == 9000);
  CHECK(same_bits(back->params, newer.params));
}

TEST_CASE("a failed write leaves the old checkpoint intact and no temporary file",
          "[checkpoint]") {
  temp_dir dir;
  // A non-empty directory where the file should go makes the final rename
  // fail after the temporary file was written and synced.
  const auto blocked = dir.file("blocked.ckpt");
  fs::create_directories(fs::path(blocked) / "inside");
  auto result = write_checkpoint(blocked, sample(100));
  REQUIRE_FALSE(result);
  CHECK(result.error().code == errc::io);
  CHECK_THAT(result.error().message, Catch::Contains(blocked) && Catch::Contains("rename"));
  CHECK(dir.names() == std::vector<std::string>{"blocked.ckpt"});

  // And a good checkpoint beside it is untouched by that failure.
  const auto good = dir.file("good.ckpt");
  REQUIRE(write_checkpoint(good, sample(100)));
  const auto before = load(good);
  REQUIRE_FALSE(write_checkpoint(blocked, sample(100, 5.0f)));
  CHECK(load(good) == before);
  CHECK(dir.names() == std::vector<std::string>{"blocked.ckpt", "good.ckpt"});
}

TEST_CASE("writing into a directory that cannot hold the file is an io_error", "[checkpoint]") {
  temp_dir dir;
  SECTION("the directory does not exist") {
    const auto path = dir.file("missing/run.ckpt");
    auto result = write_checkpoint(path, sample(10));
    REQUIRE_FALSE(result);
    CHECK(result.error().code == errc::io);
    CHECK_THAT(result.error().message,
               Catch::Contains(path) && Catch::Contains("No such file or directory"));
  }
  SECTION("the parent is a regular file") {
    save(dir.file("plain"), bytes{1, 2, 3});
    const auto path = dir.file("plain/run.ckpt");
    auto result = write_checkpoint(path, sample(10));
    REQUIRE_FALSE(result);
    CHECK(result.error().code == errc::io);
    CHECK_THAT(result.error().message, Catch::Contains(path) && Catch::Contains("Not a directory"));
  }
  SECTION("the directory is read-only") {
    const auto locked = dir.path / "locked";
    fs::create_directories(locked);
    fs::permissions(locked, fs::perms::owner_read | fs::perms::owner_exec);
    if (::geteuid() == 0) {
      WARN("running as root, which may write into read-only directories: "
           "the read-only case is skipped");
    } else {
      const auto path = (locked / "run.ckpt").string();
      auto result = write_checkpoint(path, sample(10));
      REQUIRE_FALSE(result);
      CHECK(result.error().code == errc::io);
      CHECK_THAT(result.error().message,
                 Catch::Contains(path) && Catch::Contains("Permission denied"));
    }
    fs::permissions(locked, fs::perms::owner_all);
    CHECK(fs::is_empty(locked));
  }
}

TEST_CASE("reading a missing file or a directory is an io_error", "[checkpoint]") {
  temp_dir dir;
  auto missing = read_checkpoint(dir.file("nothing.ckpt"));
  REQUIRE_FALSE(missing);
  CHECK(missing.error().code == errc::io);
  CHECK_THAT(missing.error().message,
             Catch::Contains("nothing.ckpt") && Catch::Contains("No such file or directory"));

  auto directory = read_checkpoint(dir.path.string());
  REQUIRE_FALSE(directory);
  CHECK(directory.error().code == errc::io);
  CHECK_THAT(directory.error().message, Catch::Contains("Is a directory"));
}

TEST_CASE("a truncated checkpoint is refused at every cut point", "[checkpoint]") {
  temp_dir dir;
  const auto path = dir.file("run.ckpt");
  REQUIRE(write_checkpoint(path, sample(300)));
  const auto whole = load(path);

  // Every length through the header and the fixed payload fields, then a few
  // dozen spread over the rest, then the last byte missing.
  std::vector<size_t> cuts;
  for (size_t n = 0; n <= 140; ++n)
    cuts.push_back(n);
  for (size_t i = 1; i <= 40; ++i)
    cuts.push_back(whole.size() * i / 41);
  cuts.push_back(whole.size() - 1);

  const auto cut_path = dir.file("cut.ckpt");
  for (size_t n : cuts) {
    INFO("cut after " << n << " of " << whole.size() << " bytes");
    save(cut_path, bytes(whole.begin(), whole.begin() + static_cast<std::ptrdiff_t>(n)));
    auto result = read_checkpoint(cut_path);
    REQUIRE_FALSE(result);
    CHECK(result.error().code == errc::bad_data);
    CHECK_THAT(result.error().message, Catch::Contains(cut_path) && Catch::Contains("truncated"));
    if (n >= 40)
      CHECK_THAT(result.error().message,
                 Catch::Contains(std::to_string(n) + " bytes, header promises "
                                 + std::to_string(whole.size())));
  }
}

TEST_CASE("a flipped byte in the payload fails the checksum", "[checkpoint]") {
  temp_dir dir;
  const auto path = dir.file("run.ckpt");
  REQUIRE(write_checkpoint(path, sample(300)));
  const auto whole = load(path);
  const auto bad_path = dir.file("bad.ckpt");
  for (size_t at : {size_t{40}, size_t{47}, size_t{100}, whole.size() / 2, whole.size() - 1}) {
    INFO("byte " << at << " flipped");
    auto bad = whole;
    bad[at] ^= 0x10;
    save(bad_path, bad);
    auto result = read_checkpoint(bad_path);
    REQUIRE_FALSE(result);
    CHECK(result.error().code == errc::bad_data);
    CHECK_THAT(result.error().message,
               Catch::Contains(bad_path) && Catch::Contains("checksum mismatch: the file is corrupt"));
  }
}

TEST_CASE("a flipped byte anywhere in the header is refused", "[checkpoint]") {
  temp_dir dir;
  const auto path = dir.file("run.ckpt");
  REQUIRE(write_checkpoint(path, sample(50)));
  const auto whole = load(path);
  const auto bad_path = dir.file("bad.ckpt");
  for (size_t at = 0; at < 40; ++at) {
    INFO("byte " << at << " flipped");
    auto bad = whole;
    bad[at] ^= 0x01;
    save(bad_path, bad);
    auto result = read_checkpoint(bad_path);
    REQUIRE_FALSE(result);
    CHECK(result.error().code == errc::bad_data);
    CHECK_THAT(result.error().message, Catch::Contains(bad_path));
  }
}

TEST_CASE("a file with the wrong magic is not taken for a checkpoint", "[checkpoint]") {
  temp_dir dir;
  const auto path = dir.file("run.ckpt");
  REQUIRE(write_checkpoint(path, sample(10)));
  auto file = load(path);
  std::memcpy(file.data(), "TROUPEXX", 8);
  save(path, file);
  auto result = read_checkpoint(path);
  REQUIRE_FALSE(result);
  CHECK(result.error().code == errc::bad_data);
  CHECK_THAT(result.error().message,
             Catch::Contains(path) && Catch::Contains("not a Troupe checkpoint"));

  save(path, bytes{'h', 'i'});
  CHECK_THAT(message_of(read_checkpoint(path)), Catch::Contains("not a Troupe checkpoint"));
}

TEST_CASE("an unknown format version is refused by number", "[checkpoint]") {
  temp_dir dir;
  const auto path = dir.file("run.ckpt");
  REQUIRE(write_checkpoint(path, sample(10)));
  const auto whole = load(path);
  for (uint32_t version : {0u, 6u, 0xffffffffu}) {
    INFO("version " << version);
    auto file = whole;
    std::memcpy(file.data() + 16, &version, 4);
    reseal(file);
    save(path, file);
    auto result = read_checkpoint(path);
    REQUIRE_FALSE(result);
    CHECK(result.error().code == errc::bad_data);
    CHECK_THAT(result.error().message,
               Catch::Contains("unknown format version " + std::to_string(version))
                 && Catch::Contains("reads versions 1 to 5"));
  }
}

TEST_CASE("a format 1 file, from before epoch_complete, still loads with the flag unset",
          "[checkpoint]") {
  temp_dir dir;
  const auto path = dir.file("run.ckpt");
  auto c = sample(10);
  c.epoch_complete = true;
  REQUIRE(write_checkpoint(path, c));
  // Format 1 is format 4 without its last two fields (the settings and the
  // learning-rate factor), and without the epoch_complete field, the sixth
  // integer of the payload.
  auto file = load(path);
  file.resize(file.size() - sample_settings_bytes - rate_factor_bytes - no_residuals_bytes);
  const auto flag_at = static_cast<std::ptrdiff_t>(40 + 5 * 8);
  file.erase(file.begin() + flag_at, file.begin() + flag_at + 8);
  uint32_t version = 1;
  std::memcpy(file.data() + 16, &version, 4);
  reseal(file);
  save(path, file);
  auto back = read_checkpoint(path);
  REQUIRE(back);
  CHECK_FALSE(back->epoch_complete);
  CHECK(back->epoch == c.epoch);
  CHECK(back->epoch_round == c.epoch_round);
  CHECK(back->optimizer_steps == c.optimizer_steps);
  CHECK(back->model == c.model);
  CHECK(same_bits(back->params, c.params));
  CHECK(same_bits(back->optimizer_state, c.optimizer_state));
}

TEST_CASE("a format 2 file, from before the settings, loads with their hash alone and a "
          "resume with other settings is refused by it",
          "[checkpoint]") {
  temp_dir dir;
  const auto path = dir.file("run.ckpt");
  REQUIRE(write_checkpoint(path, sample(10)));
  auto file = load(path);
  file.resize(file.size() - sample_settings_bytes - rate_factor_bytes - no_residuals_bytes);
  uint32_t version = 2;
  std::memcpy(file.data() + 16, &version, 4);
  reseal(file);
  save(path, file);
  auto back = read_checkpoint(path);
  REQUIRE(back);
  CHECK(back->settings.empty());
  CHECK(back->config_fingerprint == settings_fingerprint(sample_settings));
  CHECK(check_compatible(*back, back->model, sample_settings, 10, path));
  auto other = sample_settings;
  other[2].value = "7";
  auto refused = check_compatible(*back, back->model, other, 10, path);
  REQUIRE_FALSE(refused);
  CHECK_THAT(refused.error().message,
             Catch::Contains("other run settings") && Catch::Contains("does not record which"));
}

TEST_CASE("an epoch_complete flag other than 0 or 1 is refused", "[checkpoint]") {
  temp_dir dir;
  const auto path = dir.file("run.ckpt");
  REQUIRE(write_checkpoint(path, sample(10)));
  auto file = load(path);
  const uint64_t two = 2;
  std::memcpy(file.data() + 40 + 5 * 8, &two, 8);
  reseal(file);
  save(path, file);
  auto result = read_checkpoint(path);
  REQUIRE_FALSE(result);
  CHECK(result.error().code == errc::bad_data);
  CHECK_THAT(result.error().message,
             Catch::Contains(path) && Catch::Contains("malformed payload: epoch_complete is 2"));
}

TEST_CASE("a file from another byte order or float format is refused", "[checkpoint]") {
  temp_dir dir;
  const auto path = dir.file("run.ckpt");
  REQUIRE(write_checkpoint(path, sample(10)));
  const auto whole = load(path);
  for (size_t field : {size_t{8}, size_t{12}}) {
    auto file = whole;
    std::reverse(file.begin() + static_cast<std::ptrdiff_t>(field),
                 file.begin() + static_cast<std::ptrdiff_t>(field) + 4);
    reseal(file);
    save(path, file);
    CHECK_THAT(message_of(read_checkpoint(path)), Catch::Contains("another byte order"));
  }
}

TEST_CASE("trailing bytes after a checkpoint are refused", "[checkpoint]") {
  temp_dir dir;
  const auto path = dir.file("run.ckpt");
  REQUIRE(write_checkpoint(path, sample(10)));
  auto file = load(path);
  const auto size = file.size();
  file.insert(file.end(), {'j', 'u', 'n', 'k'});
  save(path, file);
  auto result = read_checkpoint(path);
  REQUIRE_FALSE(result);
  CHECK(result.error().code == errc::bad_data);
  CHECK_THAT(result.error().message,
             Catch::Contains(path)
               && Catch::Contains("4 trailing bytes after the " + std::to_string(size)));
}

TEST_CASE("lengths that lie inside a well-checksummed file are refused", "[checkpoint]") {
  temp_dir dir;
  const auto path = dir.file("run.ckpt");
  REQUIRE(write_checkpoint(path, sample(10)));
  const auto whole = load(path);
  // The model's length field follows the seven integers of the payload.
  const size_t model_length_at = 40 + 7 * 8;
  for (uint64_t lie : {uint64_t{1} << 40, ~uint64_t{0}, uint64_t{15}}) {
    INFO("model length " << lie);
    auto file = whole;
    std::memcpy(file.data() + model_length_at, &lie, 8);
    reseal(file);
    save(path, file);
    auto result = read_checkpoint(path);
    REQUIRE_FALSE(result);
    CHECK(result.error().code == errc::bad_data);
    CHECK_THAT(result.error().message, Catch::Contains("malformed payload"));
  }
  // A float count larger than what remains, including one that would
  // overflow when multiplied by four.
  const size_t params_count_at = model_length_at + 8 + 14 + 8 + 4;
  for (uint64_t lie : {uint64_t{11}, uint64_t{1} << 62, ~uint64_t{0}}) {
    INFO("params count " << lie);
    auto file = whole;
    std::memcpy(file.data() + params_count_at, &lie, 8);
    reseal(file);
    save(path, file);
    CHECK_THAT(message_of(read_checkpoint(path)), Catch::Contains("malformed payload"));
  }
}

TEST_CASE("check_compatible accepts the run a checkpoint was written for", "[checkpoint]") {
  const auto c = sample(1000);
  auto ok = check_compatible(c, "784-128relu-10", sample_settings, 1000, "run.ckpt");
  CHECK(ok);
  // The same model spelled with a leading zero is still the same model.
  CHECK(check_compatible(c, "784-0128relu-10", sample_settings, 1000, "run.ckpt"));
  // So is a layered model spelled another way, and another one is not.
  auto layered = c;
  layered.model = "28x28x1-conv4k3-flatten-dropout0.50-10";
  CHECK(check_compatible(layered, "28x28x1-conv4k3-flatten-dropout0.5-10", sample_settings,
                         1000, "run.ckpt"));
  CHECK_FALSE(check_compatible(layered, "28x28x1-conv4k3-flatten-dropout0.25-10",
                               sample_settings, 1000, "run.ckpt"));
}

TEST_CASE("check_compatible refuses another model, other settings, naming each, or another "
          "size",
          "[checkpoint]") {
  auto c = sample(1000);
  c.model = "784-64relu-10";
  auto model = check_compatible(c, "784-128relu-10", sample_settings, 1000, "run.ckpt");
  REQUIRE_FALSE(model);
  CHECK(model.error().code == errc::invalid_argument);
  CHECK(model.error().message
        == "checkpoint run.ckpt was written for model 784-64relu-10, this run trains 784-128relu-10");

  c.model = "784-128relu-10";
  auto other = sample_settings;
  other[2].value = "7";
  other[3].value = "0.002";
  auto settings = check_compatible(c, c.model, other, 1000, "run.ckpt");
  REQUIRE_FALSE(settings);
  CHECK(settings.error().code == errc::invalid_argument);
  CHECK(settings.error().message
        == "checkpoint run.ckpt was written by a run with other settings (--seed=42 there, 7 "
           "here; --lr=0.001 there, 0.002 here): resume with the original settings");

  auto size = check_compatible(c, c.model, sample_settings, 1010, "run.ckpt");
  REQUIRE_FALSE(size);
  CHECK(size.error().code == errc::invalid_argument);
  CHECK_THAT(size.error().message,
             Catch::Contains("run.ckpt") && Catch::Contains("1000 parameters")
               && Catch::Contains("1010"));
}
