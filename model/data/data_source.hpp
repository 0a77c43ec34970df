// Loads a data set from a source string: a directory of (Fashion-)MNIST IDX
// files, a pair of .npy files, or a CSV file.
#pragma once

#include <string>

#include "common/expected.hpp"
#include "model/data/dataset.hpp"

namespace troupe::detail {

/// Loads one data set from `source`, which is one of:
/// - a directory holding the IDX files load_dataset reads; `split` picks
///   train-*-ubyte or t10k-*-ubyte, and classes is 10;
/// - "X.npy,y.npy": features (samples, features...) and labels (samples);
/// - "file.csv" or "file.csv:label=COLUMN": a header row, an integer label
///   column (default "label"), every other column a feature.
/// For .npy and CSV, classes is the largest label + 1 and `split` is unused.
expected<dataset> load_data_source(const std::string& source, data_split split);

/// Loads the training set from `train_source` and the test set from
/// `test_source`; checks that both have the same features per sample and
/// gives both the larger of their two class counts.
expected<dataset_pair> load_data_pair(const std::string& train_source,
                                      const std::string& test_source);

} // namespace troupe::detail
