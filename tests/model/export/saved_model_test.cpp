// Tests for the saved-model file: bit-exact round trips, atomic replacement,
// and every kind of damaged file refused with an error naming it.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <string>

#include "model/export/saved_model.hpp"
#include "model/model_spec.hpp"
#include "model/parameter_layout.hpp"
#include "tests/model/export/test_files.hpp"

using namespace troupe;

namespace {

// A 784-128relu-10 model whose parameters include the floats a careless
// format loses: negative zero, a denormal, infinities and a NaN payload.
saved_model example_model() {
  auto spec = parse_model_spec("784-128relu-10");
  REQUIRE(spec);
  saved_model m;
  m.model = to_string(*spec);
  m.inputs = 784;
  m.outputs = 10;
  m.loss = sparse_categorical_crossentropy;
  m.parameters = glorot_uniform_parameters(parameter_layout(*spec), 3);
  m.parameters[0] = -0.0f;
  m.parameters[1] = std::numeric_limits<float>::denorm_min();
  m.parameters[2] = std::numeric_limits<float>::infinity();
  m.parameters[3] = -std::numeric_limits<float>::infinity();
  const uint32_t nan_bits = 0x7fc01234;
  std::memcpy(&m.parameters[4], &nan_bits, sizeof(nan_bits));
  return m;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size()
         && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

void put_le(std::string& bytes, size_t offset, uint64_t value, size_t width) {
  for (size_t i = 0; i < width; ++i)
    bytes[offset + i] = static_cast<char>((value >> (8 * i)) & 0xff);
}

// Rewrites the trailing checksum so that only the deliberate damage remains.
void reseal(std::string& bytes) {
  const size_t content = bytes.size() - 8;
  put_le(bytes, content, fnv1a64(bytes.data(), content), 8);
}

// Saves the example, damages the file with `damage`, and returns the error
// that loading it gives.
error load_damaged(const temp_dir& dir, void (*damage)(std::string&)) {
  const std::string path = dir.file("damaged.troupe");
  REQUIRE(save_model(path, example_model()));
  std::string bytes = read_bytes(path);
  damage(bytes);
  write_bytes(path, bytes);
  auto loaded = load_saved_model(path);
  REQUIRE_FALSE(loaded);
  INFO(loaded.error().message);
  CHECK(loaded.error().message.find(path) != std::string::npos);
  return loaded.error();
}

} // namespace

TEST_CASE("a saved model reads back bit for bit", "[export][saved_model]") {
  temp_dir dir;
  const auto original = example_model();
  const std::string path = dir.file("model.troupe");
  REQUIRE(save_model(path, original));
  auto loaded = load_saved_model(path);
  INFO((loaded ? std::string() : loaded.error().message));
  REQUIRE(loaded);
  CHECK(loaded->model == original.model);
  CHECK(loaded->inputs == original.inputs);
  CHECK(loaded->outputs == original.outputs);
  CHECK(loaded->loss == original.loss);
  CHECK(same_bits(loaded->parameters, original.parameters));
  CHECK(read_bytes(path).substr(0, 13) == "troupe-model\n");
}

TEST_CASE("a layered model is saved as format version 2, any other as version 1",
          "[export][saved_model]") {
  temp_dir dir;
  auto version_of = [&](const saved_model& m) {
    const std::string path = dir.file("versioned.troupe");
    REQUIRE(save_model(path, m));
    auto loaded = load_saved_model(path);
    REQUIRE(loaded);
    CHECK(loaded->model == m.model);
    return static_cast<unsigned char>(read_bytes(path)[13]);
  };
  saved_model layered;
  layered.model = "28x28x1-conv8k3relu-maxpool2-flatten-10";
  layered.inputs = 784;
  layered.outputs = 10;
  layered.loss = "sparse_categorical_crossentropy";
  layered.parameters = {0.5f, -1.0f};
  CHECK(version_of(layered) == 2);
  CHECK(version_of(example_model()) == 1);
  layered.model = "fm:inputs=8,factors=4";
  CHECK(version_of(layered) == 1);
}

TEST_CASE("a model registered by name is stored opaque, with any parameter count",
          "[export][saved_model]") {
  temp_dir dir;
  saved_model m;
  m.model = "small_cnn:filters=8;kernel=3";
  m.inputs = 784;
  m.outputs = 10;
  m.loss = "";
  m.parameters = {1.5f, -2.25f, 3.0f};
  const std::string path = dir.file("named.troupe");
  REQUIRE(save_model(path, m));
  auto loaded = load_saved_model(path);
  REQUIRE(loaded);
  CHECK(loaded->model == m.model);
  CHECK(loaded->loss.empty());
  CHECK(same_bits(loaded->parameters, m.parameters));
}

TEST_CASE("saving replaces an older file and leaves no temporary behind",
          "[export][saved_model]") {
  temp_dir dir;
  const std::string path = dir.file("model.troupe");
  write_bytes(path, "an older file");
  auto m = example_model();
  m.parameters[10] = 42.0f;
  REQUIRE(save_model(path, m));
  auto loaded = load_saved_model(path);
  REQUIRE(loaded);
  CHECK(loaded->parameters[10] == 42.0f);
  size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path)) {
    (void) entry;
    ++files;
  }
  CHECK(files == 1);
}

TEST_CASE("saving refuses a model that contradicts itself", "[export][saved_model]") {
  temp_dir dir;
  const std::string path = dir.file("model.troupe");
  auto wrong_count = example_model();
  wrong_count.parameters.pop_back();
  auto result = save_model(path, wrong_count);
  REQUIRE_FALSE(result);
  CHECK(result.error().code == errc::invalid_argument);
  CHECK(result.error().message.find("101769") != std::string::npos);
  auto no_outputs = example_model();
  no_outputs.outputs = 0;
  CHECK_FALSE(save_model(path, no_outputs));
  auto no_description = example_model();
  no_description.model.clear();
  CHECK_FALSE(save_model(path, no_description));
  CHECK_FALSE(std::filesystem::exists(path));
}

TEST_CASE("a missing or unwritable saved model is an io_error naming the path",
          "[export][saved_model]") {
  temp_dir dir;
  const std::string missing = dir.file("absent.troupe");
  auto loaded = load_saved_model(missing);
  REQUIRE_FALSE(loaded);
  CHECK(loaded.error().code == errc::io);
  CHECK(loaded.error().message.find(missing) != std::string::npos);
  CHECK(loaded.error().message.find("cannot open") != std::string::npos);
  auto as_directory = load_saved_model(dir.path.string());
  REQUIRE_FALSE(as_directory);
  CHECK(as_directory.error().code == errc::io);
  auto saved = save_model(dir.file("no/such/dir/model.troupe"), example_model());
  REQUIRE_FALSE(saved);
  CHECK(saved.error().code == errc::io);
}

TEST_CASE("every kind of damaged saved model gets its own clear error",
          "[export][saved_model]") {
  temp_dir dir;
  auto message_of = [&](void (*damage)(std::string&)) {
    const auto error = load_damaged(dir, damage);
    CHECK(error.code == errc::bad_data);
    return error.message;
  };
  using Catch::Matchers::Contains;
  CHECK_THAT(message_of([](std::string& b) { b.clear(); }), Contains("empty"));
  CHECK_THAT(message_of([](std::string& b) { b[0] = 'T'; }),
             Contains("not a Troupe saved model"));
  CHECK_THAT(message_of([](std::string& b) { b = "PK\x03\x04 a zip file"; }),
             Contains("not a Troupe saved model"));
  CHECK_THAT(message_of([](std::string& b) { put_le(b, 13, 3, 4); }),
             Contains("format version 3 is newer than this build reads"));
  CHECK_THAT(message_of([](std::string& b) { b.resize(30); }),
             Contains("shorter than the 49-byte header"));
  CHECK_THAT(message_of([](std::string& b) { b.resize(b.size() - 100); }),
             Contains("truncated"));
  CHECK_THAT(message_of([](std::string& b) { b += "extra"; }), Contains("5 trailing bytes"));
  CHECK_THAT(message_of([](std::string& b) { b[b.size() / 2] ^= 0x10; }),
             Contains("checksum mismatch"));
  CHECK_THAT(message_of([](std::string& b) { put_le(b, 41, uint64_t{1} << 60, 8); }),
             Contains("exceed the file's"));
}

TEST_CASE("a saved model whose header disagrees with its model_spec is refused",
          "[export][saved_model]") {
  temp_dir dir;
  // One parameter fewer, consistently in the header and the data, resealed:
  // only the model_spec text shows the count is wrong.
  const auto error = load_damaged(dir, [](std::string& b) {
    put_le(b, 41, 101769, 8);
    b.erase(b.size() - 12, 4);
    reseal(b);
  });
  CHECK(error.code == errc::bad_data);
  INFO(error.message);
  CHECK(error.message.find("101770 parameters, but the header says 784, 10 and 101769")
        != std::string::npos);
}
