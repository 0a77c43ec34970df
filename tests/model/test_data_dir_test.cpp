// Tests for the test binaries' own data lookup (tests/test_slice.hpp): a
// binary carried to another machine finds tests/data through
// $TROUPE_TEST_DATA_DIR, and a wrong directory says which variable to set.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

#include "tests/temp_dir.hpp"
#include "tests/test_slice.hpp"

namespace fs = std::filesystem;
using namespace troupe;

namespace {

// Sets $TROUPE_TEST_DATA_DIR (or unsets it) for one scope, then restores it.
class scoped_data_dir {
public:
  explicit scoped_data_dir(const std::optional<std::string>& value) {
    if (const char* old = std::getenv(test_data_dir_variable))
      saved_ = old;
    if (value)
      ::setenv(test_data_dir_variable, value->c_str(), 1);
    else
      ::unsetenv(test_data_dir_variable);
  }
  ~scoped_data_dir() {
    if (saved_)
      ::setenv(test_data_dir_variable, saved_->c_str(), 1);
    else
      ::unsetenv(test_data_dir_variable);
  }
  scoped_data_dir(const scoped_data_dir&) = delete;
  scoped_data_dir& operator=(const scoped_data_dir&) = delete;

private:
  std::optional<std::string> saved_;
};

using testing::temp_dir;

} // namespace

TEST_CASE("the test data loader reads the directory TROUPE_TEST_DATA_DIR names",
          "[test_data]") {
  const fs::path original = test_data_dir(); // where this run's data is
  temp_dir copy;
  // A copy that differs from tests/data: its test split doubles as the
  // training split, so 500 training samples show which directory was read.
  for (const char* split : {"train", "t10k"}) {
    fs::copy_file(original / "t10k-images-idx3-ubyte.gz",
                  copy.path / (std::string(split) + "-images-idx3-ubyte.gz"));
    fs::copy_file(original / "t10k-labels-idx1-ubyte.gz",
                  copy.path / (std::string(split) + "-labels-idx1-ubyte.gz"));
  }
  {
    scoped_data_dir pointed(copy.path.string());
    CHECK(test_data_dir() == copy.path.string());
    auto loaded = load_test_data();
    INFO((loaded ? std::string() : loaded.error().message));
    REQUIRE(loaded);
    CHECK(loaded->train.count == 500);
    CHECK(loaded->test.count == 500);
  }
  { // unset or empty: the path compiled in
    scoped_data_dir unset(std::nullopt);
    CHECK(test_data_dir() == TROUPE_TEST_DATA_DIR);
    scoped_data_dir empty(std::string{});
    CHECK(test_data_dir() == TROUPE_TEST_DATA_DIR);
  }
}

TEST_CASE("a missing test data directory is an error that names TROUPE_TEST_DATA_DIR",
          "[test_data]") {
  temp_dir parent;
  const std::string missing = (parent.path / "nowhere").string();
  scoped_data_dir pointed(missing);
  auto loaded = load_test_data();
  REQUIRE_FALSE(loaded);
  const std::string& message = loaded.error().message;
  INFO(message);
  CHECK(loaded.error().code == errc::io);
  CHECK(message.find(missing) != std::string::npos);
  CHECK(message.find("does not exist") != std::string::npos);
  CHECK(message.find("$TROUPE_TEST_DATA_DIR") != std::string::npos);
  CHECK(message.find("set TROUPE_TEST_DATA_DIR to a directory holding a copy of tests/data")
        != std::string::npos);
}
