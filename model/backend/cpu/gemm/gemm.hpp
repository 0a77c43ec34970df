// Row-major single-precision GEMMs whose bits do not depend on the kernel that
// computes them: every c[i][j] is summed over k in order, starting from zero,
// with one rounding per multiply-add (the fused family, FMA) or two (the
// unfused family). Kernels only vectorize across j, so an AVX-512 host, an
// AVX2 host and a 4-wide FMA kernel give the same bits; the kernel is picked
// at run time from the CPU (or by name), after it reproduced a scalar
// reference bit for bit on this host.
#pragma once

#include <string>
#include <vector>

#include "common/expected.hpp"

namespace troupe::detail {

/// Says how a kernel rounds a * b + c: once (fused) or twice (unfused).
enum class gemm_family { fused, unfused };

/// Returns "fused" or "unfused".
const char* to_string(gemm_family family);

/// Describes one GEMM kernel built into Troupe.
struct gemm_kernel_info {
  std::string name;        // "avx512", "avx2", "fma128", "portable"
  gemm_family family = gemm_family::unfused;
  std::string needs;       // the CPU features it requires, for messages
  bool supported = false;  // this CPU has them
  bool verified = false;   // it reproduced the reference bits here
};

/// Lists every kernel built into this binary, fastest first.
std::vector<gemm_kernel_info> gemm_kernels();

/// Selects the kernel every later gemm() call uses in this process: "auto"
/// (the fastest supported one that passed its check) or a kernel's name.
/// Returns the kernel now in use, or why `name` cannot be used here.
expected<gemm_kernel_info> select_gemm_kernel(const std::string& name);

/// Returns the kernel in use (selecting "auto" on first use).
const gemm_kernel_info& current_gemm_kernel();

/// Returns a warning for a person when the kernel in use is slower than one
/// this CPU supports (e.g. "portable" chosen by hand on an AVX2 host), or "".
std::string gemm_kernel_warning();

/// c = alpha * op(a) * op(b) + beta * c with op(a): (m, k), op(b): (k, n),
/// c: (m, n), all row-major; op transposes when the flag is set (a is then
/// stored (k, m), b (n, k)). c is not read when beta is 0.
void gemm(bool transpose_a, bool transpose_b, int m, int n, int k, float alpha,
          const float* a, const float* b, float beta, float* c);

} // namespace troupe::detail
