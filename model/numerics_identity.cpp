// The numerics identity: build settings (from CMake), the C library's math
// code path and the GEMM kernel.
#include "model/numerics_identity.hpp"

#if defined(__GLIBC__)
#  include <gnu/libc-version.h>
#endif

#include "model/backend/cpu/gemm/gemm.hpp"

#ifndef TROUPE_BUILD_NUMERICS
#  error "TROUPE_BUILD_NUMERICS comes from cmake/TroupeCompileOptions.cmake"
#endif

namespace troupe::detail {

namespace {

// Compiled with the project's flags: a contracting build turns it into an FMA.
float multiply_add(float a, float b, float c) {
  return a * b + c;
}

std::string libm_identity() {
#if defined(__GLIBC__)
  std::string result = std::string{"glibc "} + gnu_get_libc_version();
#  if defined(__x86_64__)
  // glibc picks FMA variants of expf/logf on such CPUs: the last bit may differ.
  const bool fma_paths = __builtin_cpu_supports("fma") && __builtin_cpu_supports("avx2");
  result += fma_paths ? " (FMA code paths)" : " (SSE2 code paths)";
#  endif
  return result;
#else
  return "unknown C library";
#endif
}

} // namespace

bool build_contracts_multiply_add() {
  // (1 + 2^-12)^2 - 1 is 2^-11 + 2^-24 exactly; rounding the product first
  // loses the 2^-24.
  volatile float a = 1.0f + 1.0f / 4096.0f;
  volatile float c = -1.0f;
  return multiply_add(a, a, c) != 1.0f / 2048.0f;
}

numerics_identity current_numerics() {
  numerics_identity id;
  id.build = std::string{TROUPE_BUILD_NUMERICS}
             + (build_contracts_multiply_add() ? " (contracts a*b+c!)" : "");
  id.libm = libm_identity();
  const auto& kernel = current_gemm_kernel();
  id.gemm_kernel = kernel.name;
  id.gemm_family = to_string(kernel.family);
  return id;
}

std::string numerics_difference(const numerics_identity& mine,
                                const numerics_identity& theirs) {
  if (mine.gemm_family != theirs.gemm_family)
    return "GEMM family " + theirs.gemm_family + " (kernel " + theirs.gemm_kernel + ") vs "
           + mine.gemm_family + " (kernel " + mine.gemm_kernel + ")";
  if (mine.build != theirs.build)
    return "build '" + theirs.build + "' vs '" + mine.build + "'";
  if (mine.libm != theirs.libm)
    return "math library '" + theirs.libm + "' vs '" + mine.libm + "'";
  return "";
}

} // namespace troupe::detail
