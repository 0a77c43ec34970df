// The Adam update loops. Build with -fopt-info-vec-optimized to see that the
// loop below is vectorized (it needs -fno-math-errno for sqrtf).
#include "model/backend/cpu/adam_kernel.hpp"

#include <cmath>

#include "model/flush_denormals.hpp"

namespace troupe {

// One clone per vector width, picked at load time for the CPU (the portable
// build's baseline alone gives 4-float SSE, 2x slower). Every element takes
// the same IEEE operations in the same order in each clone (no FMA:
// -ffp-contract=off), so all clones compute the same bits.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
void adam_kernel(float* __restrict weights, const float* __restrict gradient,
                 float* __restrict m, float* __restrict v, size_t count,
                 const adam_coefficients& c) {
  const float alpha = c.alpha;
  const float beta1 = c.beta1;
  const float beta2 = c.beta2;
  const float one_minus_beta1 = 1.0f - c.beta1;
  const float one_minus_beta2 = 1.0f - c.beta2;
  const float epsilon = c.epsilon;
  flush_denormals_scope flush;
  for (size_t i = 0; i < count; ++i) {
    const float g = gradient[i];
    const float mi = beta1 * m[i] + one_minus_beta1 * g;
    const float vi = beta2 * v[i] + one_minus_beta2 * g * g;
    m[i] = mi;
    v[i] = vi;
    weights[i] -= alpha * mi / (std::sqrt(vi) + epsilon);
  }
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
void adam_sum2_kernel(float* __restrict weights, const float* __restrict first,
                      float first_weight, const float* __restrict last, float last_weight,
                      float* __restrict m, float* __restrict v, size_t count,
                      const adam_coefficients& c) {
  const float alpha = c.alpha;
  const float beta1 = c.beta1;
  const float beta2 = c.beta2;
  const float one_minus_beta1 = 1.0f - c.beta1;
  const float one_minus_beta2 = 1.0f - c.beta2;
  const float epsilon = c.epsilon;
  flush_denormals_scope flush;
  for (size_t i = 0; i < count; ++i) {
    float g = first_weight * first[i];
    g += last_weight * last[i];
    const float mi = beta1 * m[i] + one_minus_beta1 * g;
    const float vi = beta2 * v[i] + one_minus_beta2 * g * g;
    m[i] = mi;
    v[i] = vi;
    weights[i] -= alpha * mi / (std::sqrt(vi) + epsilon);
  }
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
void weighted_add_kernel(float* __restrict out, const float* __restrict gradient, float weight,
                         size_t count, bool first) {
  flush_denormals_scope flush;
  if (first)
    for (size_t i = 0; i < count; ++i)
      out[i] = weight * gradient[i];
  else
    for (size_t i = 0; i < count; ++i)
      out[i] += weight * gradient[i];
}

} // namespace troupe
