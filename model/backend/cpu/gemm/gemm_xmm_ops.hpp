// The 4-float (xmm) vector ops the portable and fma128 kernels share; each
// adds its own multiply_add. Internal linkage: each kernel's file compiles
// its own copy with its own flags.
#pragma once

#include <emmintrin.h>

namespace troupe::detail::gemm_detail {
namespace {

struct xmm_ops {
  using vec = __m128;
  static constexpr int width = 4;
  static vec zero() { return _mm_setzero_ps(); }
  static vec load(const float* p) { return _mm_loadu_ps(p); }
  static void store(float* p, vec v) { _mm_storeu_ps(p, v); }
  static vec broadcast(float x) { return _mm_set1_ps(x); }
  static vec mul(vec a, vec b) { return _mm_mul_ps(a, b); }
  static vec add(vec a, vec b) { return _mm_add_ps(a, b); }
};

} // namespace
} // namespace troupe::detail::gemm_detail
