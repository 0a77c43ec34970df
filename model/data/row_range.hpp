// A run of consecutive rows of another source, and the split of a training
// source into what trains and what validates (Keras's validation_split).
#pragma once

#include <cstddef>
#include <memory>

#include <troupe/data_source.hpp>

namespace troupe::detail {

/// Serves rows [first, first + count) of `whole` as a source of its own
/// (first + count <= whole->size()); it names the same data as `whole`.
std::shared_ptr<const data_source> row_range(std::shared_ptr<const data_source> whole,
                                             size_t first, size_t count);

/// Returns how many of `samples` train under validation split `fraction`,
/// as Keras counts them: floor(samples * (1 - fraction)).
size_t training_rows(size_t samples, double fraction);

/// Splits `data` for validation split `fraction` (0: `data` as it is): the
/// first training_rows of the training source train, the rest of it
/// validates in the place of the test source.
source_pair split_for_validation(const source_pair& data, double fraction);

} // namespace troupe::detail
