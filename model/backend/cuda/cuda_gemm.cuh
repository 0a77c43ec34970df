// The row-major GEMM on cuBLAS (which is column-major), shared by the backend
// and the layers' twins.
#pragma once

#include <cublas_v2.h>

namespace troupe::detail::cuda_detail {

/// c = alpha * op(a) op(b) + beta * c, row-major: op(a) (m, k), op(b) (k, n),
/// c (m, n), each operand stored densely in its own layout.
void row_major_gemm(cublasHandle_t blas, bool transpose_a, bool transpose_b, int m, int n,
                    int k, float alpha, const float* a, const float* b, float beta, float* c);

} // namespace troupe::detail::cuda_detail
