// What decides the bits of this process's CPU numerics, so that nodes can be
// compared before a run that promises the same bits on every replica.
#pragma once

#include <string>

namespace troupe::detail {

/// Describes everything that decides the floats a CPU replica computes.
struct numerics_identity {
  std::string build;       // compiler, target ISA, contraction (fixed at build time)
  std::string libm;        // the C library's exp/log: version and code path
  std::string gemm_kernel; // the GEMM kernel in use ("avx2"); several give the same bits
  std::string gemm_family; // what decides the GEMM's bits: "fused" or "unfused"
};

/// Returns this process's identity (with the GEMM kernel selected now).
numerics_identity current_numerics();

/// Returns "" when two identities compute the same bits, else the first
/// difference in words: "GEMM family fused (avx2) vs unfused (portable)".
std::string numerics_difference(const numerics_identity& mine,
                                const numerics_identity& theirs);

/// Tells whether this build fuses a * b + c into one rounding (it must not:
/// see cmake/TroupeCompileOptions.cmake). Measured, not assumed.
bool build_contracts_multiply_add();

} // namespace troupe::detail
