// What a GEMM kernel is handed: operand pointers already resolved to "row i,
// column k" strides for a and a b that is contiguous along n.
#pragma once

namespace troupe::detail::gemm_detail {

/// c = alpha * A * B + beta * c with A(i, k) = a[i * a_row_stride + k * a_k_stride],
/// B(k, j) = b[k * ldb + j] and c(i, j) = c[i * ldc + j]; m x n x k.
struct gemm_args {
  int m = 0, n = 0, k = 0;
  float alpha = 1, beta = 0;
  const float* a = nullptr;
  long a_row_stride = 0, a_k_stride = 0;
  const float* b = nullptr;
  long ldb = 0;
  float* c = nullptr;
  long ldc = 0;
  /// Room for k * max_panel_width floats: a kernel copies the last columns
  /// of B there, zero-padded to whole vectors.
  float* scratch = nullptr;
  /// Start from the sums c holds (a later block of k) instead of from zero.
  bool accumulate = false;
  static constexpr int max_panel_width = 32;
};

using kernel_function = void (*)(const gemm_args&);

// One per ISA file (gemm_<isa>.cpp); each compiled only with its own flags.
void gemm_portable(const gemm_args& args);
void gemm_reference_unfused(const gemm_args& args);
#if defined(__x86_64__)
void gemm_fma128(const gemm_args& args);
void gemm_avx2(const gemm_args& args);
void gemm_avx512(const gemm_args& args);
void gemm_reference_fused(const gemm_args& args);
#endif

} // namespace troupe::detail::gemm_detail
