// The fused kernel sixteen floats wide (AVX-512F). Built with -mavx512f -mfma.
#include "model/backend/cpu/gemm/gemm_tiles.hpp"

#include <immintrin.h>

namespace troupe::detail::gemm_detail {

namespace {

struct avx512_ops {
  using vec = __m512;
  static constexpr int width = 16;
  static vec zero() { return _mm512_setzero_ps(); }
  static vec load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, vec v) { _mm512_storeu_ps(p, v); }
  static vec broadcast(float x) { return _mm512_set1_ps(x); }
  static vec mul(vec a, vec b) { return _mm512_mul_ps(a, b); }
  static vec add(vec a, vec b) { return _mm512_add_ps(a, b); }
  static vec multiply_add(vec a, vec b, vec acc) { return _mm512_fmadd_ps(a, b, acc); }
};

} // namespace

// 8 x 32 tiles: 16 accumulators of the 32 zmm registers.
void gemm_avx512(const gemm_args& args) {
  run_tiles<avx512_ops, 8, 2>(args);
}

} // namespace troupe::detail::gemm_detail
