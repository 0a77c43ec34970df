// The Adam update loops. Build with -fopt-info-vec-optimized to see that the
// loop below is vectorized (it needs -fno-math-errno for sqrtf).
#include "model/backend/cpu/adam_kernel.hpp"

#include <algorithm>
#include <cmath>

#if defined(__x86_64__) && defined(__GNUC__)
#  include <cpuid.h>
#endif

#include "model/flush_denormals.hpp"

namespace troupe::detail {

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

// A store shard's weights were just read by its replicas, on other cores:
// their lines sit shared in those cores' caches, and a store to a shared line
// waits for the other copies to go. PREFETCHW fetches a line for writing, the
// copies dropped, before the loop gets there. A hint only: the values are the
// same. On weights no other core reads (one thread training alone) it costs
// a little, so only a step told its weights are shared
// (adam_coefficients::weights_shared) asks. AMD CPUs have had it since the
// K6, Intel's since Broadwell; elsewhere the loop runs without it.
bool cpu_has_prefetchw() {
#if defined(__x86_64__) && defined(__GNUC__)
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  return __get_cpuid(0x80000001u, &eax, &ebx, &ecx, &edx) && (ecx & bit_PRFCHW) != 0;
#else
  return false;
#endif
}

const bool has_prefetchw = cpu_has_prefetchw();

// Runs body(begin, end) over [0, count) a block at a time, first asking for
// write ownership of the weights `ahead` floats past the block.
template <class Body>
__attribute__((always_inline)) inline void in_blocks_prefetching(float* weights, size_t count,
                                                                 bool shared, Body body) {
  const bool prefetch = shared && has_prefetchw;
  constexpr size_t block = 256; // floats: 16 cache lines
  constexpr size_t ahead = 512; // 2 KB: far enough for the line to arrive
  for (size_t begin = 0; begin < count; begin += block) {
#if defined(__x86_64__) && defined(__GNUC__)
    if (prefetch && begin + ahead + block <= count)
      for (size_t line = 0; line < block; line += 16)
        __asm__ volatile("prefetchw %0" : : "m"(weights[begin + ahead + line]));
#endif
    body(begin, std::min(count, begin + block));
  }
}

// One clone per vector width, picked at load time for the CPU (the portable
// build's baseline alone gives 4-float SSE). Every element takes
// the same IEEE operations in the same order in each clone (no FMA:
// -ffp-contract=off), so all clones compute the same bits. The clones are
// local, called through the kernels' names below: an ifunc symbol with
// external linkage is exported whatever its visibility attribute says.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
void adam_clones(float* __restrict weights, const float* __restrict gradient,
                 float* __restrict m, float* __restrict v, size_t count,
                 const adam_coefficients& c) {
  const adam_element_step step(c);
  flush_denormals_scope flush;
  in_blocks_prefetching(weights, count, c.weights_shared, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i)
      step(gradient[i], weights[i], m[i], v[i]);
  });
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
void adam_sum2_clones(float* __restrict weights, const float* __restrict first,
                      float first_weight, const float* __restrict last, float last_weight,
                      float* __restrict m, float* __restrict v, size_t count,
                      const adam_coefficients& c) {
  const adam_element_step step(c);
  flush_denormals_scope flush;
  in_blocks_prefetching(weights, count, c.weights_shared, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      float g = first_weight * first[i];
      g += last_weight * last[i];
      step(g, weights[i], m[i], v[i]);
    }
  });
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
void weighted_add_clones(float* __restrict out, const float* __restrict gradient, float weight,
                         size_t count, bool first) {
  flush_denormals_scope flush;
  if (first)
    for (size_t i = 0; i < count; ++i)
      out[i] = weight * gradient[i];
  else
    for (size_t i = 0; i < count; ++i)
      out[i] += weight * gradient[i];
}


} // namespace

void adam_kernel(float* weights, const float* gradient, float* m, float* v, size_t count,
                 const adam_coefficients& c) {
  adam_clones(weights, gradient, m, v, count, c);
}

void adam_sum2_kernel(float* weights, const float* first, float first_weight, const float* last,
                      float last_weight, float* m, float* v, size_t count,
                      const adam_coefficients& c) {
  adam_sum2_clones(weights, first, first_weight, last, last_weight, m, v, count, c);
}

void weighted_add_kernel(float* out, const float* gradient, float weight, size_t count,
                         bool first) {
  weighted_add_clones(out, gradient, weight, count, first);
}

} // namespace troupe::detail
