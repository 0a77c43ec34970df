// Labelled samples in memory, as every Troupe data source yields them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <troupe/expected.hpp>

namespace troupe {

/// Holds `count` samples of `features` floats each, and one class label per
/// sample. (The field `images` holds any features; its name comes from the
/// IDX files, whose pixels it holds scaled to [0, 1].)
struct dataset {
  int count = 0;
  int features = 0;             // floats per sample
  int classes = 10;             // labels lie in [0, classes)
  std::vector<float> images;    // (count, features)
  std::vector<int32_t> labels;  // (count)
  std::string source;           // where it was loaded from; empty when built in memory

  /// Returns sample i's features.
  const float* image(size_t i) const { return images.data() + i * features; }
};

/// Holds a training set and the test (validation) set scored after each epoch.
struct dataset_pair {
  dataset train;
  dataset test;
};

/// Builds a dataset from arrays in memory: features (count, width) row-major
/// and one label per row. Checks the sizes, that every feature is finite and
/// every label lies in [0, classes) (classes 0: the largest label + 1).
expected<dataset> make_dataset(std::vector<float> features, std::vector<int32_t> labels,
                               int width, int classes = 0);

} // namespace troupe
