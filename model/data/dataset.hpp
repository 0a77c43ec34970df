// The loader for a directory that holds the four standard (Fashion-)MNIST
// files, and the batch helpers over a dataset (<troupe/dataset.hpp>).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <troupe/data_source.hpp>
#include <troupe/dataset.hpp>

#include "common/expected.hpp"
#include "model/model_spec.hpp"

namespace troupe::detail {

/// Names Debian's Fashion-MNIST directory, the default data directory.
std::string default_data_dir();

/// Loads one image file and one label file; checks that the counts match and
/// every label lies in [0, classes).
expected<dataset> load_split(const std::string& images_path,
                             const std::string& labels_path, int classes = 10);

/// Loads one split of an IDX directory: train-images-idx3-ubyte and
/// train-labels-idx1-ubyte, or the t10k files, each as the plain name or
/// with ".gz" (the .gz file wins when both exist).
expected<dataset> load_idx_split(const std::string& dir, data_split split);

/// Loads train-images-idx3-ubyte, train-labels-idx1-ubyte,
/// t10k-images-idx3-ubyte and t10k-labels-idx1-ubyte from `dir`, each as the
/// plain name or with ".gz" (the .gz file wins when both exist).
expected<dataset_pair> load_dataset(const std::string& dir);

/// Checks that a model's input width fits `data` and that every class of
/// `data` is one of its outputs; the error names the `role` set ("training"
/// or "test"), its source and the first sample that does not fit.
status check_model_fits(const model_spec& spec, const data_source& data,
                        const std::string& role = "training");

/// Serves `data` as a source without owning it: the caller keeps it alive
/// while the source is used.
std::shared_ptr<const data_source> borrowed_source(const dataset& data);

/// Copies the samples named by `indices` into contiguous buffers:
/// inputs_out: (count, features), labels_out: (count).
void gather_batch(const dataset& data, const uint32_t* indices, size_t count,
                  float* inputs_out, int32_t* labels_out);

/// Copies the features alone of the samples named by `indices`:
/// inputs_out: (count, features).
void gather_features(const dataset& data, const uint32_t* indices, size_t count,
                     float* inputs_out);

/// Copies the targets of the samples named by `indices` (a regression set):
/// targets_out: (count, target_width).
void gather_targets(const dataset& data, const uint32_t* indices, size_t count,
                    float* targets_out);

/// Asks the CPU to start loading the rows named by `indices` (a hint: it
/// changes no value; indices past the end are skipped). A batch's rows lie
/// at random in the images (188 MB for Fashion-MNIST's training set), so
/// each costs a cache and TLB miss, which fetching them during the step
/// before hides.
void prefetch_rows(const dataset& data, const uint32_t* indices, size_t count);

} // namespace troupe::detail
