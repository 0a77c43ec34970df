// Reading a whole data source in chunks of rows, as evaluation and
// prediction do: the coordinator's test-set score, trained_model's.
#pragma once

#include <cstddef>
#include <functional>

#include <troupe/data_source.hpp>
#include <troupe/model.hpp>

#include "common/expected.hpp"

namespace troupe::detail {

/// The rows of one evaluation chunk. The sums of a score depend on its
/// chunks, so every evaluation uses this size.
constexpr size_t evaluation_rows = 1000;

/// What a walk over a source gathers: the features alone (to predict), or
/// with each sample's label or targets (to score).
enum class chunk_content { features, answered };

/// Gathers every sample of `data` in order, evaluation_rows at a time, and
/// calls `visit` with each chunk and the index of its first row. Answered
/// chunks have labels (classification) or targets (regression), the other
/// null; a label out of range is an error, and stops the walk.
status for_each_chunk(const data_source& data, chunk_content content,
                      const std::function<void(const batch& chunk, size_t first)>& visit);

/// Sums `scorer`'s evaluation at `parameters` over every sample of `data`.
expected<batch_result> evaluate_source(model& scorer, const float* parameters,
                                       const data_source& data);

} // namespace troupe::detail
