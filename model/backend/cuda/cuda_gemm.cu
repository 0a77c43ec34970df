// The row-major GEMM on cuBLAS.
#include "model/backend/cuda/cuda_gemm.cuh"

#include <algorithm>

#include "model/backend/cuda/cuda_check.hpp"

namespace troupe::detail::cuda_detail {

// cuBLAS is column-major. The bytes of a row-major (r, c) matrix are the
// column-major (c, r) matrix, its transpose. So the row-major product
// C = op(A) op(B) is computed as the column-major C^T = op(B)^T op(A)^T:
// swap the operands and m with n; each operand keeps its own transpose flag,
// and every leading dimension is the stored row length of that operand.
void row_major_gemm(cublasHandle_t blas, bool transpose_a, bool transpose_b, int m, int n,
                    int k, float alpha, const float* a, const float* b, float beta, float* c) {
  int lda = transpose_a ? m : k; // a stored (k, m) or (m, k)
  int ldb = transpose_b ? k : n; // b stored (n, k) or (k, n)
  TROUPE_CUBLAS_CHECK(cublasSgemm(blas, transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N,
                                  transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N, n, m, k, &alpha, b,
                                  std::max(ldb, 1), a, std::max(lda, 1), &beta, c,
                                  std::max(n, 1)));
}

} // namespace troupe::detail::cuda_detail
