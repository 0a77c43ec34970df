// Opens the training and test sources of a run, and checks what a source
// gathered (<troupe/data_source.hpp> holds the registry's public half).
#pragma once

#include <cstdint>
#include <string>

#include <troupe/data_source.hpp>

#include "common/expected.hpp"

namespace troupe::detail {

/// Tells whether `source` names one of the built-in sources (a directory,
/// an .npy pair, a CSV file) rather than a registered kind.
bool names_builtin_source(const std::string& source);

/// Opens `train_source` and `test_source` (open_data): two built-in sources
/// as load_data_pair loads them, both with the larger class count; any
/// pair, checked for the same features per sample and the same kind of
/// label or target.
expected<source_pair> open_data_pair(const std::string& train_source,
                                     const std::string& test_source);

/// Serves both halves of `data` as sources that share its ownership.
source_pair sources_of(std::shared_ptr<const dataset_pair> data);

/// Checks the labels a classification source gathered for the samples at
/// `indices`: each must lie in [0, source.classes()).
status check_gathered_labels(const data_source& source, const uint32_t* indices,
                             const int32_t* labels, size_t count);

} // namespace troupe::detail
