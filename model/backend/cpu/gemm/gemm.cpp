// Kernel selection (by CPU features, after a bit-for-bit check against the
// scalar reference of the kernel's family) and the row-major entry point.
#include "model/backend/cpu/gemm/gemm.hpp"

#include <atomic>
#include <cstdint>
#include <cstring>
#include <mutex>

#include "model/backend/cpu/gemm/gemm_args.hpp"

namespace troupe::detail {

using gemm_detail::gemm_args;
using gemm_detail::kernel_function;

namespace {

struct kernel_entry {
  const char* name;
  gemm_family family;
  const char* needs;
  kernel_function run;
  kernel_function reference;
  bool (*cpu_has)();
};

#if defined(__x86_64__)
bool has_avx512() {
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma");
}
bool has_avx2() {
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}
bool has_fma() {
  return __builtin_cpu_supports("avx") && __builtin_cpu_supports("fma");
}
#endif
bool always() {
  return true;
}

// Fastest first: "auto" takes the first one this CPU supports and verifies.
const kernel_entry kernels[] = {
#if defined(__x86_64__)
  {"avx512", gemm_family::fused, "AVX-512F and FMA", gemm_detail::gemm_avx512,
   gemm_detail::gemm_reference_fused, has_avx512},
  {"avx2", gemm_family::fused, "AVX2 and FMA", gemm_detail::gemm_avx2,
   gemm_detail::gemm_reference_fused, has_avx2},
  {"fma128", gemm_family::fused, "AVX and FMA", gemm_detail::gemm_fma128,
   gemm_detail::gemm_reference_fused, has_fma},
#endif
  {"portable", gemm_family::unfused, "nothing", gemm_detail::gemm_portable,
   gemm_detail::gemm_reference_unfused, always},
};
constexpr size_t kernel_count = sizeof(kernels) / sizeof(kernels[0]);

// Fills x with values in [-1, 1) from a fixed linear congruential sequence.
void fill(std::vector<float>& x, uint32_t seed) {
  for (auto& value : x) {
    seed = seed * 1664525u + 1013904223u;
    value = static_cast<float>(seed >> 8) / static_cast<float>(1u << 23) - 1.0f;
  }
}

// Runs the kernel and its family's reference on shapes that cover full and
// leftover tiles, both transposes of a and alpha/beta, and compares the bits.
bool reproduces_reference(const kernel_entry& kernel) {
  struct shape {
    int m, n, k;
  };
  const shape shapes[] = {{13, 37, 29}, {1, 1, 1}, {7, 130, 3}, {20, 16, 50}, {9, 10, 128}};
  uint32_t seed = 7;
  for (const auto& s : shapes)
    for (bool transpose_a : {false, true})
      for (float beta : {0.0f, -0.5f}) {
        std::vector<float> a(static_cast<size_t>(s.m) * s.k), b(static_cast<size_t>(s.k) * s.n),
          c(static_cast<size_t>(s.m) * s.n);
        fill(a, ++seed);
        fill(b, ++seed);
        fill(c, ++seed);
        auto expected = c;
        gemm_args args;
        args.m = s.m;
        args.n = s.n;
        args.k = s.k;
        args.alpha = beta == 0.0f ? 1.0f : 0.75f;
        args.beta = beta;
        args.a = a.data();
        args.a_row_stride = transpose_a ? 1 : s.k;
        args.a_k_stride = transpose_a ? s.m : 1;
        args.b = b.data();
        args.ldb = s.n;
        args.ldc = s.n;
        args.c = c.data();
        std::vector<float> scratch(static_cast<size_t>(s.k) * gemm_args::max_panel_width);
        args.scratch = scratch.data();
        kernel.run(args);
        args.c = expected.data();
        kernel.reference(args);
        if (std::memcmp(c.data(), expected.data(), c.size() * sizeof(float)) != 0)
          return false;
      }
  return true;
}

// What each kernel can do on this host, found once.
const std::vector<gemm_kernel_info>& host_kernels() {
  static const std::vector<gemm_kernel_info> infos = [] {
    std::vector<gemm_kernel_info> result;
    for (const auto& kernel : kernels) {
      gemm_kernel_info info;
      info.name = kernel.name;
      info.family = kernel.family;
      info.needs = kernel.needs;
      info.supported = kernel.cpu_has();
      info.verified = info.supported && reproduces_reference(kernel);
      result.push_back(info);
    }
    return result;
  }();
  return infos;
}

size_t auto_kernel() {
  const auto& infos = host_kernels();
  for (size_t i = 0; i < infos.size(); ++i)
    if (infos[i].verified)
      return i;
  return kernel_count - 1; // the portable kernel: only a broken build lands here
}

std::atomic<size_t> selected{kernel_count};

size_t selected_index() {
  size_t index = selected.load(std::memory_order_acquire);
  if (index == kernel_count) {
    size_t expected = kernel_count;
    selected.compare_exchange_strong(expected, auto_kernel(), std::memory_order_acq_rel);
    index = selected.load(std::memory_order_acquire);
  }
  return index;
}

// Returns room for `floats` floats in a buffer that only grows: a step's
// GEMMs alternate between large and small k, and shrinking and growing again
// would zero-fill the buffer once per step.
float* room(std::vector<float>& buffer, size_t floats) {
  if (buffer.size() < floats)
    buffer.resize(floats);
  return buffer.data();
}

} // namespace

const char* to_string(gemm_family family) {
  return family == gemm_family::fused ? "fused" : "unfused";
}

std::vector<gemm_kernel_info> gemm_kernels() {
  return host_kernels();
}

expected<gemm_kernel_info> select_gemm_kernel(const std::string& name) {
  const auto& infos = host_kernels();
  if (name == "auto") {
    selected.store(auto_kernel(), std::memory_order_release);
    return infos[selected_index()];
  }
  std::string known;
  for (size_t i = 0; i < infos.size(); ++i) {
    known += (known.empty() ? "" : ", ") + infos[i].name;
    if (infos[i].name != name)
      continue;
    if (!infos[i].supported)
      return fail(errc::invalid_argument,
                  "GEMM kernel '" + name + "' needs " + infos[i].needs
                    + ", which this CPU does not have");
    if (!infos[i].verified)
      return fail(errc::device,
                  "GEMM kernel '" + name + "' does not reproduce its reference bits on "
                    "this host (a compiler or CPU fault): use another kernel");
    selected.store(i, std::memory_order_release);
    return infos[i];
  }
  return fail(errc::invalid_argument,
              "unknown GEMM kernel '" + name + "' (expected auto or one of " + known + ")");
}

const gemm_kernel_info& current_gemm_kernel() {
  return host_kernels()[selected_index()];
}

std::string gemm_kernel_warning() {
  const auto& infos = host_kernels();
  const size_t best = auto_kernel();
  const size_t used = selected_index();
  if (used <= best)
    return "";
  return "GEMM kernel '" + infos[used].name + "' is in use although this CPU runs '"
         + infos[best].name + "' (faster" + (infos[used].family != infos[best].family
                                                ? ", and it computes other bits)"
                                                : ", same bits)");
}

void gemm(bool transpose_a, bool transpose_b, int m, int n, int k, float alpha,
          const float* a, const float* b, float beta, float* c) {
  if (m <= 0 || n <= 0)
    return;
  gemm_args args;
  args.m = m;
  args.n = n;
  args.k = k;
  args.alpha = alpha;
  args.beta = beta;
  args.a = a;
  // a is stored (m, k), or (k, m) when transposed.
  args.a_row_stride = transpose_a ? 1 : k;
  args.a_k_stride = transpose_a ? m : 1;
  args.c = c;
  args.ldc = n;
  args.ldb = n;
  args.b = b;
  if (transpose_b) {
    // Kernels read b along n; a stored (n, k) b is turned (k, n) first. It is
    // small where Troupe transposes it (the output layer's weights).
    thread_local std::vector<float> packed;
    float* const to = room(packed, static_cast<size_t>(k) * n);
    for (int j = 0; j < n; ++j)
      for (int kk = 0; kk < k; ++kk)
        to[static_cast<size_t>(kk) * n + j] = b[static_cast<size_t>(j) * k + kk];
    args.b = to;
  }
  thread_local std::vector<float> scratch;
  args.scratch = room(scratch, static_cast<size_t>(k) * gemm_args::max_panel_width);
  kernels[selected_index()].run(args);
}

} // namespace troupe::detail
