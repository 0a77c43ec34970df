// Tests for the checkpoint file: round trips (files of older formats too),
// the documented header, and atomic replacement that loses nothing.
#include <catch2/catch.hpp>

#include <cstring>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include <unistd.h>

#include "model/checkpoint.hpp"
#include "tests/model/checkpoint_files.hpp"

namespace fs = std::filesystem;
using namespace troupe;
using namespace troupe::testing;

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
