// The fused kernel eight floats wide (AVX2 + FMA). Built with -mavx2 -mfma.
#include "model/backend/cpu/gemm/gemm_tiles.hpp"

#include <immintrin.h>

namespace troupe::detail::gemm_detail {

namespace {

struct avx2_ops {
  using vec = __m256;
  static constexpr int width = 8;
  static vec zero() { return _mm256_setzero_ps(); }
  static vec load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, vec v) { _mm256_storeu_ps(p, v); }
  static vec broadcast(float x) { return _mm256_set1_ps(x); }
  static vec mul(vec a, vec b) { return _mm256_mul_ps(a, b); }
  static vec add(vec a, vec b) { return _mm256_add_ps(a, b); }
  static vec multiply_add(vec a, vec b, vec acc) { return _mm256_fmadd_ps(a, b, acc); }
};

} // namespace

// 6 x 16 tiles: 12 accumulators, 2 b vectors and a broadcast fill 15 of the
// 16 ymm registers.
void gemm_avx2(const gemm_args& args) {
  run_tiles<avx2_ops, 6, 2>(args);
}

} // namespace troupe::detail::gemm_detail
