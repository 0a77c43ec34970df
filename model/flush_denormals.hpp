// Flushes denormal floats to zero while a scope runs. Adam's moments decay
// geometrically and reach the denormal range for weights whose inputs are
// almost always zero (image borders), and x86 computes on denormals many
// times slower than on normal floats. TensorFlow and PyTorch flush denormals
// on the CPU too.
#pragma once

#if defined(__SSE__)
#  include <xmmintrin.h>
#endif

namespace troupe::detail {

/// Sets FTZ and DAZ in this thread's MXCSR and restores the old value on exit.
class flush_denormals_scope {
public:
#if defined(__SSE__)
  flush_denormals_scope() : saved_(_mm_getcsr()) { _mm_setcsr(saved_ | ftz_daz); }
  ~flush_denormals_scope() { _mm_setcsr(saved_); }
#else
  flush_denormals_scope() = default;
#endif
  flush_denormals_scope(const flush_denormals_scope&) = delete;
  flush_denormals_scope& operator=(const flush_denormals_scope&) = delete;

private:
#if defined(__SSE__)
  static constexpr unsigned ftz_daz = 0x8040; // flush-to-zero | denormals-are-zero
  unsigned saved_;
#endif
};

} // namespace troupe::detail
