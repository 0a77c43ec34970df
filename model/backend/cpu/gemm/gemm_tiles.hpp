// The one loop nest every GEMM kernel instantiates with its own vector ops.
// Included only by the gemm_<isa>.cpp files, each compiled for its ISA:
// everything here has internal linkage (and no standard-library template is
// used), so no ISA's code can reach another kernel's callers through the linker.
//
// Each c[i][j] is one accumulator that starts at zero and takes A(i, k) * B(k, j)
// for k = 0, 1, ... in order; vectors run across j only. So the bits depend on
// ops::multiply_add (fused or not) and on nothing else: not the vector width,
// not the tile shape.
#pragma once

#include "model/backend/cpu/gemm/gemm_args.hpp"

namespace troupe::detail::gemm_detail {
namespace {

/// Loads the first `count` floats at p into a vector, zeros after them.
template <class ops>
typename ops::vec load_partial(const float* p, int count) {
  alignas(64) float lanes[ops::width] = {};
  for (int i = 0; i < count; ++i)
    lanes[i] = p[i];
  return ops::load(lanes);
}

/// Stores the first `count` lanes of v at p.
template <class ops>
void store_partial(float* p, typename ops::vec v, int count) {
  alignas(64) float lanes[ops::width];
  ops::store(lanes, v);
  for (int i = 0; i < count; ++i)
    p[i] = lanes[i];
}

// c[i0 .. i0+rows) x [j0 .. j0 + vectors * width), reading B from b (row
// stride ldb, already at column j0). With `partial`, only the first `count`
// columns of the last vector are stored (b is then a zero-padded panel).
// The accumulators must live in registers for the whole tile. So every loop
// over rows and vectors is unrolled (rolled, GCC keeps acc on the stack and
// moves it in and out around the k loop), and g is read once (c may alias
// it, so each store would reload it). Last, c = alpha * acc + beta * c: a
// separate multiply and add in every kernel.
template <class ops, int rows, int vectors, bool partial>
void tile(const gemm_args& g, const float* b, long ldb, int i0, int j0, int count) {
  using vec = typename ops::vec;
  constexpr int width = ops::width;
  const int k = g.k;
  const long a_k_stride = g.a_k_stride, ldc = g.ldc;
  const float alpha = g.alpha, beta = g.beta;
  float* const c = g.c + i0 * ldc + j0;
  vec acc[rows][vectors];
  const float* a_row[rows];
  #pragma GCC unroll 16
  for (int r = 0; r < rows; ++r) {
    a_row[r] = g.a + (i0 + r) * g.a_row_stride;
    const float* c_row = c + r * ldc;
    #pragma GCC unroll 16
    for (int u = 0; u < vectors; ++u) {
      const bool part = partial && u == vectors - 1;
      // A later block of k goes on from the sums the earlier ones stored.
      acc[r][u] = !g.accumulate ? ops::zero()
                  : part        ? load_partial<ops>(c_row + u * width, count)
                                : ops::load(c_row + u * width);
    }
  }
  for (int kk = 0; kk < k; ++kk) {
    vec b_k[vectors];
    for (int u = 0; u < vectors; ++u)
      b_k[u] = ops::load(b + u * width);
    const long a_offset = kk * a_k_stride;
    #pragma GCC unroll 16
    for (int r = 0; r < rows; ++r) {
      const vec a = ops::broadcast(a_row[r][a_offset]);
      #pragma GCC unroll 16
      for (int u = 0; u < vectors; ++u)
        acc[r][u] = ops::multiply_add(a, b_k[u], acc[r][u]);
    }
    b += ldb;
  }
  const vec alpha_v = ops::broadcast(alpha);
  const vec beta_v = ops::broadcast(beta);
  #pragma GCC unroll 16
  for (int r = 0; r < rows; ++r) {
    float* c_row = c + r * ldc;
    #pragma GCC unroll 16
    for (int u = 0; u < vectors; ++u) {
      const bool part = partial && u == vectors - 1;
      vec out = acc[r][u];
      if (alpha != 1.0f)
        out = ops::mul(out, alpha_v);
      if (beta != 0.0f) {
        const vec old = part ? load_partial<ops>(c_row + u * width, count)
                             : ops::load(c_row + u * width);
        out = ops::add(out, ops::mul(beta_v, old));
      }
      if (part)
        store_partial<ops>(c_row + u * width, out, count);
      else
        ops::store(c_row + u * width, out);
    }
  }
}

// The last columns of a band, fewer than vectors * width of them, read from
// the zero-padded panel run_block packed (row stride vectors * width).
template <class ops, int rows, int vectors, int max_vectors>
void last_columns(const gemm_args& g, int i0, int j0, int columns) {
  if constexpr (vectors > 0) {
    constexpr int width = ops::width;
    if (columns <= (vectors - 1) * width) {
      last_columns<ops, rows, vectors - 1, max_vectors>(g, i0, j0, columns);
      return;
    }
    const int last = columns - (vectors - 1) * width;
    if (last == width)
      tile<ops, rows, vectors, false>(g, g.scratch, max_vectors * width, i0, j0, width);
    else
      tile<ops, rows, vectors, true>(g, g.scratch, max_vectors * width, i0, j0, last);
  }
}

// One band of `rows` rows across all columns: the band's A stays in L1
// while the stripes of B stream past it.
template <class ops, int rows, int vectors>
void row_band(const gemm_args& g, int i0, int full_columns) {
  constexpr int stripe = vectors * ops::width;
  for (int j0 = 0; j0 < full_columns; j0 += stripe)
    tile<ops, rows, vectors, false>(g, g.b + j0, g.ldb, i0, j0, ops::width);
  if (full_columns < g.n)
    last_columns<ops, rows, vectors, vectors>(g, i0, full_columns, g.n - full_columns);
}

// The band a whole number of `rows` bands left over: m - i0 < rows rows.
template <class ops, int rows, int vectors>
void leftover_band(const gemm_args& g, int i0, int full_columns) {
  if constexpr (rows > 0) {
    if (g.m - i0 == rows)
      row_band<ops, rows, vectors>(g, i0, full_columns);
    else
      leftover_band<ops, rows - 1, vectors>(g, i0, full_columns);
  }
}

template <class ops, int rows, int vectors>
void run_block(const gemm_args& g) {
  constexpr int stripe = vectors * ops::width;
  static_assert(stripe <= gemm_args::max_panel_width);
  const int full_columns = g.n / stripe * stripe;
  if (full_columns < g.n)
    // The last columns go to a zero-padded panel, so every load is a whole vector.
    for (int kk = 0; kk < g.k; ++kk) {
      const float* from = g.b + kk * g.ldb + full_columns;
      float* to = g.scratch + kk * stripe;
      for (int j = 0; j < stripe; ++j)
        to[j] = full_columns + j < g.n ? from[j] : 0.0f;
    }
  int i0 = 0;
  for (; i0 + rows <= g.m; i0 += rows)
    row_band<ops, rows, vectors>(g, i0, full_columns);
  leftover_band<ops, rows - 1, vectors>(g, i0, full_columns);
}

/// Computes the whole product with tiles of rows x (vectors * width) floats,
/// in blocks of k that keep a stripe of B in the L1 cache. Blocking keeps the
/// order of the sums: a block starts from the sums the block before stored.
template <class ops, int rows, int vectors>
void run_tiles(const gemm_args& g) {
  constexpr int k_block = 256;
  if (g.k <= k_block || g.alpha != 1.0f || g.beta != 0.0f) {
    run_block<ops, rows, vectors>(g);
    return;
  }
  for (int k0 = 0; k0 < g.k; k0 += k_block) {
    gemm_args block = g;
    block.k = g.k - k0 < k_block ? g.k - k0 : k_block;
    block.a = g.a + k0 * g.a_k_stride;
    block.b = g.b + k0 * g.ldb;
    block.accumulate = k0 > 0;
    run_block<ops, rows, vectors>(block);
  }
}

/// The scalar definition every kernel must reproduce bit for bit.
template <class multiply_add>
void run_reference(const gemm_args& g, multiply_add fma_or_not) {
  for (int i = 0; i < g.m; ++i)
    for (int j = 0; j < g.n; ++j) {
      float acc = 0.0f;
      for (int kk = 0; kk < g.k; ++kk)
        acc = fma_or_not(g.a[i * g.a_row_stride + kk * g.a_k_stride], g.b[kk * g.ldb + j], acc);
      float out = acc;
      if (g.alpha != 1.0f)
        out = out * g.alpha;
      float& c = g.c[i * g.ldc + j];
      if (g.beta != 0.0f)
        out = out + g.beta * c;
      c = out;
    }
}

} // namespace
} // namespace troupe::detail::gemm_detail
