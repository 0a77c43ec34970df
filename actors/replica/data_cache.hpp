// One copy of each training set per process, shared by every replica a node
// hosts (a remote replica reads its data from the node's own disk).
#pragma once

#include <memory>
#include <string>

#include <caf/expected.hpp>

#include "model/data/dataset.hpp"

namespace troupe {

/// Returns the training set of `source` (an IDX directory, "X.npy,y.npy" or a
/// CSV file: load_data_source), loading it on first use.
caf::expected<std::shared_ptr<const dataset>> cached_train_set(const std::string& source);

} // namespace troupe
