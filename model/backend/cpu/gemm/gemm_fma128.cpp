// The fused kernel four floats wide (FMA on xmm registers), and the fused
// scalar reference. Built with -mavx -mfma.
#include "model/backend/cpu/gemm/gemm_tiles.hpp"

#include <immintrin.h>

#include "model/backend/cpu/gemm/gemm_xmm_ops.hpp"

namespace troupe::detail::gemm_detail {

namespace {

struct fma128_ops : xmm_ops {
  static vec multiply_add(vec a, vec b, vec acc) { return _mm_fmadd_ps(a, b, acc); }
};

} // namespace

void gemm_fma128(const gemm_args& args) {
  run_tiles<fma128_ops, 6, 2>(args);
}

void gemm_reference_fused(const gemm_args& args) {
  run_reference(args, [](float a, float b, float acc) {
    return _mm_cvtss_f32(_mm_fmadd_ss(_mm_set_ss(a), _mm_set_ss(b), _mm_set_ss(acc)));
  });
}

} // namespace troupe::detail::gemm_detail
