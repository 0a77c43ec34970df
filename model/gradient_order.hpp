// The order in which a dense layer writes its weight gradient when a
// gradient_listener wants some spans first: blocks of its rows (one per
// input), wanted ones first, each a GEMM of its own whose floats are those
// of the whole layer's (each sums over the batch in order).
#pragma once

#include <cstddef>
#include <vector>

#include <troupe/model.hpp>

#include "model/backend/backend.hpp"

namespace troupe::detail {

/// Rows [begin, end) of a weight matrix.
struct row_block {
  int begin = 0;
  int end = 0;
};

/// Splits the rows of an (in, out) weight matrix at `offset` of the flat
/// buffer where the spans `wanted` start or end, and orders the blocks that
/// hold wanted floats first (each part keeps its order). One block of every
/// row when no wanted span splits the matrix or none touches it.
std::vector<row_block> wanted_rows_first(const std::vector<parameter_span>& wanted,
                                         size_t offset, int in, int out);

/// Writes rows [block.begin, block.end) of dw = x^T delta, x: (batch, in)
/// and delta: (batch, out) in host memory, through a copy of x's columns
/// in `scratch`.
void weight_gradient_rows(backend& compute, const float* x, const float* delta, int batch,
                          int in, int out, row_block block, float* dw,
                          std::vector<float>& scratch);

} // namespace troupe::detail
