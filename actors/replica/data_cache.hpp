// One copy of each training set per process, shared by every replica a node
// hosts (a remote replica reads its data from the node's own disk).
#pragma once

#include <memory>
#include <string>

#include <caf/expected.hpp>

#include <troupe/data_source.hpp>

namespace troupe::detail {

/// Returns the training source `source` names (open_data: a registered kind,
/// an IDX directory, "X.npy,y.npy" or a CSV file), opening it on first use.
caf::expected<std::shared_ptr<const data_source>> cached_train_set(const std::string& source);

} // namespace troupe::detail
