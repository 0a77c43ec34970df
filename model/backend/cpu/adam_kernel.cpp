// The Adam update loops. Build with -fopt-info-vec-optimized to see that the
// loop below is vectorized (it needs -fno-math-errno for sqrtf).
#include "model/backend/cpu/adam_kernel.hpp"

#include <cmath>

#include "model/flush_denormals.hpp"

namespace troupe {

namespace {

// Adam's step for one element, from its gradient g: the one formula both
// loops below share. Inlined into each clone, it vectorizes with the clone's
// width.
struct adam_element_step {
  explicit adam_element_step(const adam_coefficients& c)
    : alpha(c.alpha), beta1(c.beta1), beta2(c.beta2), one_minus_beta1(1.0f - c.beta1),
      one_minus_beta2(1.0f - c.beta2), epsilon(c.epsilon) {}

  __attribute__((always_inline)) void operator()(float g, float& weight, float& m,
                                                 float& v) const {
    const float mi = beta1 * m + one_minus_beta1 * g;
    const float vi = beta2 * v + one_minus_beta2 * g * g;
    m = mi;
    v = vi;
    weight -= alpha * mi / (std::sqrt(vi) + epsilon);
  }

  float alpha, beta1, beta2, one_minus_beta1, one_minus_beta2, epsilon;
};

} // namespace

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
  const adam_element_step step(c);
  flush_denormals_scope flush;
  for (size_t i = 0; i < count; ++i)
    step(gradient[i], weights[i], m[i], v[i]);
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
void adam_sum2_kernel(float* __restrict weights, const float* __restrict first,
                      float first_weight, const float* __restrict last, float last_weight,
                      float* __restrict m, float* __restrict v, size_t count,
                      const adam_coefficients& c) {
  const adam_element_step step(c);
  flush_denormals_scope flush;
  for (size_t i = 0; i < count; ++i) {
    float g = first_weight * first[i];
    g += last_weight * last[i];
    step(g, weights[i], m[i], v[i]);
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
