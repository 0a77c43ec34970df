// The Fashion-MNIST slice in tests/data, loaded once per test binary.
// Needs TROUPE_TEST_DATA_DIR (set by tests/CMakeLists.txt) and Catch2.
#pragma once

#include <catch2/catch.hpp>

#include <string>

#include "model/data/dataset.hpp"

namespace troupe {

inline const dataset_pair& test_slice() {
  static const dataset_pair data = [] {
    auto loaded = load_dataset(TROUPE_TEST_DATA_DIR);
    INFO((loaded ? std::string() : loaded.error().message));
    REQUIRE(loaded);
    return *loaded;
  }();
  return data;
}

} // namespace troupe
