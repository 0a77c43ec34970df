// The Fashion-MNIST slice in tests/data, loaded once per test binary, from the
// directory that $TROUPE_TEST_DATA_DIR names at run time (for a binary carried
// to another machine) or else the path the build compiled in (the macro
// TROUPE_TEST_DATA_DIR, set by tests/CMakeLists.txt). Needs Catch2.
#pragma once

#include <catch2/catch.hpp>

#include <cstdlib>
#include <memory>
#include <string>

#include "model/data/dataset.hpp"

namespace troupe {

/// Names the environment variable that overrides the compiled-in data path.
inline constexpr const char* test_data_dir_variable = "TROUPE_TEST_DATA_DIR";

/// Returns $TROUPE_TEST_DATA_DIR when set and not empty, else the compiled-in path.
inline std::string test_data_dir() {
  const char* from_environment = std::getenv(test_data_dir_variable);
  if (from_environment != nullptr && *from_environment != '\0')
    return from_environment;
  return TROUPE_TEST_DATA_DIR;
}

/// Loads the slice from test_data_dir(); the error says where it looked and
/// which variable to set.
inline expected<dataset_pair> load_test_data() {
  const std::string dir = test_data_dir();
  auto loaded = load_dataset(dir);
  if (loaded)
    return loaded;
  const char* from_environment = std::getenv(test_data_dir_variable);
  const bool overridden = from_environment != nullptr && *from_environment != '\0';
  return fail(loaded.error().code,
              loaded.error().message + " (the test data came from "
                + (overridden ? std::string("$") + test_data_dir_variable
                              : std::string("the path compiled in"))
                + "; set " + test_data_dir_variable
                + " to a directory holding a copy of tests/data)");
}

/// Returns the slice, loaded on first use; fails the test when it cannot.
inline const dataset_pair& test_slice() {
  static const dataset_pair data = [] {
    auto loaded = load_test_data();
    INFO((loaded ? std::string() : loaded.error().message));
    REQUIRE(loaded);
    return *loaded;
  }();
  return data;
}

/// The same slice as a shared pointer, as fit() and replicas take their data.
inline std::shared_ptr<const dataset_pair> shared_test_slice() {
  static const std::shared_ptr<const dataset_pair> data(&test_slice(),
                                                        [](const dataset_pair*) {});
  return data;
}

/// Its training half, sharing the slice (for a replica).
inline std::shared_ptr<const dataset> shared_train_slice() {
  const auto pair = shared_test_slice();
  return std::shared_ptr<const dataset>(pair, &pair->train);
}

} // namespace troupe
