// The per-element bound on the GPU's Adam drift (see adam_drift_bound.hpp).
//
// u = 2^-24, the unit roundoff of float: fl(x) = x (1 + d) with |d| <= u. The
// CPU (model/backend/cpu/adam_kernel.cpp) and the GPU (cuda_kernels.cu, adam_loop)
// compute, with c1 = fl(1 - b1), c2 = fl(1 - b2):
//
//   m' = b1 m + c1 g,   v' = b2 v + fl(c2 g) g,   w' = fl(w - q),
//   q  = fl(fl(alpha m') / fl(fl(sqrt v') + eps))
//
// where each moment update rounds both products and the sum, except that
// either side may fuse one product into an FMA and skip its rounding: nvcc
// does by default (`nvcc -ptx` for sm_90 shows m' = fma(c1, g, fl(b1 m)) and
// v' = fma(g, fl(c2 g), fl(b2 v)), nothing else fused), and so did GCC with
// -march=native before the build set -ffp-contract=off (m' = fma(b1, m,
// fl(c1 g))): the H200 run compared exactly these two, whose m differ by
// 1.7e-9 at index 266 after 3 steps. With dm, dv, dw the bounds so far (the
// two sides' m, v, w before the step differ by at most these), to first
// order in u:
//
//   dm' = b1 dm + 2 u (|b1 m| + |c1 g|) + 2 u |m'|
//     each product's rounding, which one side may skip or, once the two m
//     differ, both sides make on different values; and each side's rounding
//     of the sum. The bound scales with the terms, not with |m'|: m' = b1 m +
//     c1 g cancels (at index 266, m' = 3.5e-4 from terms of ~5e-3), so a bound
//     rtol |cpu| would need ~60 ulps of m' there, and a blanket one would hide
//     real errors in the many small elements.
//   dv' = b2 dv + 2 u (b2 v + c2 g^2) + 2 u v'
//     the same with every term >= 0; fl(c2 g) feeds a product, never fused.
//   dq  = alpha (dm' / D_lo + |m'| ds / (D D_lo)) + 10 u |q|
//     D = sqrt(v') + eps, ds <= min(dv' / (2 sqrt(v'_lo)), sqrt(dv')) the
//     drift of sqrt(v') (sqrt is 1/2-Hoelder where v' nears 0), D_lo the
//     smallest D the other side's v' allows; 8 u for the four roundings (mul,
//     sqrt, add, div: correctly rounded on both, nvcc without --use_fast_math)
//     on each side, 2 u because adam_update_counted derives alpha on the
//     device with CUDA's pow, which may round to the neighbouring float.
//   dw' = dw + dq + 2 u |w'|
//
// Each bound also gets 4 FLT_MIN per step: the CPU flushes denormal results to
// zero (flush_denormals_scope), nvcc (no -ftz) keeps them. The neglected terms
// are products of two of the above, each u (~6e-8) times smaller; the final
// 1/1024 margin covers them. Gradients are inputs here, the same bits on both
// sides; where a GPU GEMM computes them, compare the gradients on their own.
//
// What the bound still catches: beta1 0.91 for 0.9 moves m by 0.01 |m - g|,
// ~1e-3 here, against bounds of ~1e-8; a missing bias correction scales
// alpha, and so every update of w, by 3 at t = 1; an off-by-one element
// compares unrelated random values.
#include "tests/cuda/adam_drift_bound.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>

namespace troupe::cuda_test {

namespace {

constexpr double u = 0x1.0p-24;
constexpr double denormal_flush = 4.0 * FLT_MIN;
constexpr double second_order_margin = 1.0 + 1.0 / 1024.0;

} // namespace

adam_drift_bound::adam_drift_bound(size_t count)
  : m_(count, 0.0), v_(count, 0.0), w_(count, 0.0) {
}

void adam_drift_bound::step(const std::vector<float>& w, const std::vector<float>& g,
                            const std::vector<float>& m, const std::vector<float>& v,
                            const adam_coefficients& c) {
  const double b1 = c.beta1, b2 = c.beta2;
  const double c1 = 1.0f - c.beta1, c2 = 1.0f - c.beta2;
  const double alpha = c.alpha, eps = c.epsilon;
  for (size_t i = 0; i < m_.size(); ++i) {
    const double gi = g[i];
    // The step in double stands in for the CPU's values after it: the bound
    // needs their size, not their last bit.
    const double b1m = b1 * m[i], c1g = c1 * gi;
    const double m1 = b1m + c1g;
    const double b2v = b2 * v[i], c2gg = c2 * gi * gi;
    const double v1 = b2v + c2gg;
    const double s = std::sqrt(v1), d = s + eps;
    const double q = alpha * m1 / d;
    const double w1 = w[i] - q;

    const double dm = b1 * m_[i] + 2 * u * (std::fabs(b1m) + std::fabs(c1g))
                      + 2 * u * std::fabs(m1) + denormal_flush;
    const double dv = b2 * v_[i] + 2 * u * (b2v + c2gg) + 2 * u * v1 + denormal_flush;
    const double v1_low = std::max(v1 - dv, 0.0);
    const double ds = v1_low > 0 ? std::min(dv / (2 * std::sqrt(v1_low)), std::sqrt(dv))
                                 : std::sqrt(dv);
    const double d_low = std::sqrt(v1_low) + eps;
    const double dq = alpha * (dm / d_low + std::fabs(m1) * ds / (d * d_low))
                      + 10 * u * std::fabs(q) + denormal_flush;
    const double dw = w_[i] + dq + 2 * u * std::fabs(w1) + denormal_flush;

    m_[i] = dm * second_order_margin;
    v_[i] = dv * second_order_margin;
    w_[i] = dw * second_order_margin;
  }
}

} // namespace troupe::cuda_test
