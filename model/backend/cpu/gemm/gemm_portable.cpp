// The unfused kernel for any host (SSE on x86-64, plain floats elsewhere) and
// the unfused scalar reference. Built with the baseline flags only.
#include "model/backend/cpu/gemm/gemm_tiles.hpp"

#if defined(__SSE2__)
#  include "model/backend/cpu/gemm/gemm_xmm_ops.hpp"
#endif

namespace troupe::detail::gemm_detail {

namespace {

#if defined(__SSE2__)
struct sse_unfused : xmm_ops {
  static vec multiply_add(vec a, vec b, vec acc) { return _mm_add_ps(acc, _mm_mul_ps(a, b)); }
};
using portable_ops = sse_unfused;
constexpr int portable_rows = 6;
#else
struct scalar_unfused {
  using vec = float;
  static constexpr int width = 1;
  static vec zero() { return 0.0f; }
  static vec load(const float* p) { return *p; }
  static void store(float* p, vec v) { *p = v; }
  static vec broadcast(float x) { return x; }
  static vec mul(vec a, vec b) { return a * b; }
  static vec add(vec a, vec b) { return a + b; }
  static vec multiply_add(vec a, vec b, vec acc) { return acc + a * b; }
};
using portable_ops = scalar_unfused;
constexpr int portable_rows = 4;
#endif

} // namespace

void gemm_portable(const gemm_args& args) {
  run_tiles<portable_ops, portable_rows, 2>(args);
}

void gemm_reference_unfused(const gemm_args& args) {
  run_reference(args, [](float a, float b, float acc) { return acc + a * b; });
}

} // namespace troupe::detail::gemm_detail
