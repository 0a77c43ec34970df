// Labelled samples in memory, as every Troupe data source yields them; the
// loaders of a data source, of features alone, and the writer of result
// tables (.npy or CSV).
#pragma once

#include <troupe/export.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <troupe/expected.hpp>

namespace troupe {

/// Holds `count` samples of `features` floats each, and per sample either
/// one class label (classification) or `target_width` float targets
/// (regression). Labels lie in [0, classes); a classification set left with
/// classes 0 has the largest label + 1, counted when it is served as a data
/// source (in_memory, fit); a regression set keeps classes 0.
struct TROUPE_API dataset {
  int count = 0;
  int features = 0;             // floats per sample
  int classes = 0;              // 0: the largest label + 1 (classification)
  std::vector<float> inputs;    // (count, features)
  std::vector<int32_t> labels;  // (count); empty for regression
  std::vector<float> targets;   // (count, target_width); empty for classification
  int target_width = 0;         // targets per sample; 0 for classification
  std::string source;           // where it was loaded from; empty when built in memory

  /// Tells whether the samples carry float targets rather than labels.
  bool regression() const { return target_width > 0; }

  /// Returns sample i's features.
  const float* input(size_t i) const { return inputs.data() + i * features; }

  // The names of the release before, kept for one release. `images` is bound
  // to this object's own `inputs`: a copy or a move binds it to the new
  // object's, an assignment copies the fields and leaves it bound.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  [[deprecated("use inputs")]] std::vector<float>& images = inputs;

  /// Returns sample i's features (the old name of input).
  [[deprecated("use input")]] const float* image(size_t i) const { return input(i); }

  /// Copies or moves every field but `images`, which names this object's inputs.
  dataset() = default;
  dataset(const dataset& other) { *this = other; }
  dataset(dataset&& other) noexcept { *this = std::move(other); }
  dataset& operator=(const dataset& other);
  dataset& operator=(dataset&& other) noexcept;
#pragma GCC diagnostic pop
};

inline dataset& dataset::operator=(const dataset& other) {
  count = other.count;
  features = other.features;
  classes = other.classes;
  inputs = other.inputs;
  labels = other.labels;
  targets = other.targets;
  target_width = other.target_width;
  source = other.source;
  return *this;
}

inline dataset& dataset::operator=(dataset&& other) noexcept {
  count = other.count;
  features = other.features;
  classes = other.classes;
  inputs = std::move(other.inputs);
  labels = std::move(other.labels);
  targets = std::move(other.targets);
  target_width = other.target_width;
  source = std::move(other.source);
  return *this;
}

/// Holds a training set and the test (validation) set scored after each epoch.
struct TROUPE_API dataset_pair {
  dataset train;
  dataset test;
};

/// Builds a dataset from arrays in memory: features (count, width) row-major
/// and one label per row. Checks the sizes, that every feature is finite and
/// every label lies in [0, classes) (classes 0: the largest label + 1).
TROUPE_API expected<dataset> make_dataset(std::vector<float> features, std::vector<int32_t> labels,
                               int width, int classes = 0);

/// Builds a regression dataset from arrays in memory: features (count,
/// width) and targets (count, target_width), row-major, all finite.
TROUPE_API expected<dataset> make_regression_dataset(std::vector<float> features,
                                          std::vector<float> targets, int width,
                                          int target_width);

/// Names the half of an IDX directory to load: train-* or t10k-* files.
enum class data_split { train, test };

/// Loads a labelled dataset from `source`: a directory of IDX files (its
/// `split`), "X.npy,y.npy" (a float y holds regression targets), or
/// "file.csv[:label=COLUMN]" ("file.csv:target=COLUMN": a float target); the sources
/// --train and --test take. Its `source` names where it came from, so that
/// nodes can load it too.
TROUPE_API expected<dataset> load_data(const std::string& source, data_split split = data_split::train);

/// Loads features without labels, to predict on: an .npy file shaped
/// (samples, features...) (float32, float64, or uint8 pixels scaled to
/// [0, 1]), or a CSV file with a header row whose every column is a
/// feature, but for a column named "label", which is dropped. The dataset's
/// labels are empty and its classes 0.
TROUPE_API expected<dataset> load_features(const std::string& source);

/// Writes `values`, (rows, cols) row-major, to `path`: a float32 .npy file
/// (as numpy.save writes it) when the path ends in ".npy", a CSV file with a
/// header row p0,...,p{cols-1} when it ends in ".csv". The file is replaced
/// in one step. Another extension or a size that is not rows x cols is
/// invalid_argument; a failed write io_error.
TROUPE_API status write_array(const std::string& path, const std::vector<float>& values, size_t rows,
                   size_t cols);

} // namespace troupe
