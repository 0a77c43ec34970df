// The interface a run reads its samples through: a count, a width, a label
// or target type, and a gather of rows by index. Troupe's own sources (IDX,
// .npy, CSV, arrays in memory) implement it, and so can a user's: data
// generated on the fly, read from a store of its own, or larger than memory.
#pragma once

#include <troupe/export.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <troupe/dataset.hpp>
#include <troupe/expected.hpp>

namespace troupe {

/// Describes samples a run reads by index: size() rows of features() floats,
/// each with a class label in [0, classes()) (classification) or
/// target_width() float targets (regression). Replicas call gather from
/// their own threads at once, so it must be safe to call concurrently and
/// must give the same values for the same index every time: a sync run's
/// bits depend on them.
class TROUPE_API data_source {
public:
  virtual ~data_source() = default;

  /// Returns the number of samples.
  virtual size_t size() const = 0;

  /// Returns the floats of one sample's features (its shape, flattened).
  virtual int features() const = 0;

  /// Returns the number of classes of the labels; 0 for regression.
  virtual int classes() const = 0;

  /// Returns the float targets per sample; 0 for classification.
  virtual int target_width() const { return 0; }

  /// Tells whether the samples carry float targets rather than labels.
  bool regression() const { return target_width() > 0; }

  /// Copies the samples named by `indices` (each below size()):
  /// features_out (count, features()), labels_out (count) unless null or a
  /// regression set, targets_out (count, target_width()) unless null.
  virtual void gather(const uint32_t* indices, size_t count, float* features_out,
                      int32_t* labels_out, float* targets_out) const = 0;

  /// Hints that the samples named by `indices` are read next (the default
  /// does nothing); it must change no value.
  virtual void prefetch(const uint32_t* indices, size_t count) const {
    (void)indices;
    (void)count;
  }

  /// Returns the text open_data opens this source from in any process (a
  /// file, directory or "kind:settings" of a registered kind), which nodes
  /// open to train on it; empty when it exists only in this process.
  virtual std::string name() const { return {}; }

  /// Copies `count` samples from `first` on (first + count <= size()) into a
  /// dataset in memory.
  dataset rows(size_t first, size_t count) const;
};

/// Holds a training source and the test (validation) source.
struct TROUPE_API source_pair {
  std::shared_ptr<const data_source> train;
  std::shared_ptr<const data_source> test;
};

/// Serves a dataset held in memory as a source; its name is data.source.
TROUPE_API std::shared_ptr<const data_source> in_memory(std::shared_ptr<const dataset> data);

/// Serves a dataset held in memory as a source, taking it over.
TROUPE_API std::shared_ptr<const data_source> in_memory(dataset data);

/// Builds a source of a registered kind from the settings after its name
/// ("rows=1000,seed=3" of "kind:rows=1000,seed=3"; empty when none) and the
/// split asked for; an error says what was wrong with the settings.
using data_source_factory = std::function<expected<std::shared_ptr<const data_source>>(
  const std::string& settings, data_split split)>;

/// Registers a kind of source as `kind` (letters, digits, '_' and '-'), so
/// "kind" or "kind:settings" opens it with open_data, --train and --test in
/// this process. A node program registers the same kinds before node_main
/// to open them on nodes. Registering a kind again replaces it.
TROUPE_API status register_data_source(const std::string& kind, data_source_factory factory);

/// Opens `source`: "kind[:settings]" of a registered kind, or one of the
/// built-in sources load_data reads (an IDX directory, "X.npy,y.npy",
/// "file.csv[:label=COLUMN]"), loaded into memory.
TROUPE_API expected<std::shared_ptr<const data_source>> open_data(const std::string& source,
                                                       data_split split = data_split::train);

} // namespace troupe
