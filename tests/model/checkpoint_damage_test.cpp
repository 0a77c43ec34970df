// Tests for the checkpoint file: every kind of damaged, old or mismatched
// file is refused with a clear error, or loaded as its format says.
#include <catch2/catch.hpp>

#include <cstring>
#include <string>
#include <vector>

#include "model/checkpoint.hpp"
#include "tests/model/checkpoint_files.hpp"

using namespace troupe;
using namespace troupe::testing;

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
