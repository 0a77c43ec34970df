// Tests for Troupe's GEMM kernels: each is right (against a double-precision
// product), reproduces its family's scalar reference bit for bit, and kernels
// of one family agree with each other on the model's own shapes; the avx512
// tile shape runs here with portable 16-float vectors.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "model/backend/cpu/gemm/gemm.hpp"
#include "model/backend/cpu/gemm/gemm_tiles.hpp"
#include "model/numerics_identity.hpp"

using namespace troupe;

namespace {

std::vector<float> random_floats(size_t count, uint32_t seed) {
  std::vector<float> x(count);
  for (auto& value : x) {
    seed = seed * 1664525u + 1013904223u;
    value = static_cast<float>(seed >> 8) / static_cast<float>(1u << 23) - 1.0f;
  }
  return x;
}

struct problem {
  bool transpose_a, transpose_b;
  int m, n, k;
  float alpha, beta;
  std::vector<float> a, b, c;

  problem(bool ta, bool tb, int m_, int n_, int k_, float alpha_, float beta_, uint32_t seed)
    : transpose_a(ta), transpose_b(tb), m(m_), n(n_), k(k_), alpha(alpha_), beta(beta_),
      a(random_floats(static_cast<size_t>(m_) * k_, seed)),
      b(random_floats(static_cast<size_t>(k_) * n_, seed + 1)),
      c(random_floats(static_cast<size_t>(m_) * n_, seed + 2)) {}

  float a_at(int i, int kk) const { return transpose_a ? a[kk * m + i] : a[i * k + kk]; }
  float b_at(int kk, int j) const { return transpose_b ? b[j * k + kk] : b[kk * n + j]; }

  std::vector<float> run(const std::string& kernel) const {
    REQUIRE(select_gemm_kernel(kernel));
    auto out = c;
    gemm(transpose_a, transpose_b, m, n, k, alpha, a.data(), b.data(), beta, out.data());
    return out;
  }

  /// Returns the product in double precision and, beside it, the classic
  /// bound on a float dot product's error: (k + 2) u (|alpha| sum|a b| + |beta c|).
  std::vector<std::pair<double, double>> exact_with_bound() const {
    const double unit_roundoff = std::ldexp(1.0, -24);
    std::vector<std::pair<double, double>> out(c.size());
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) {
        double sum = 0, magnitude = 0;
        for (int kk = 0; kk < k; ++kk) {
          const double term = static_cast<double>(a_at(i, kk)) * b_at(kk, j);
          sum += term;
          magnitude += std::abs(term);
        }
        const double old = c[i * n + j];
        out[i * n + j] = {alpha * sum + beta * old,
                          (k + 2) * unit_roundoff
                            * (std::abs(alpha) * magnitude + std::abs(beta * old))};
      }
    return out;
  }
};

std::vector<std::string> supported_kernels() {
  std::vector<std::string> names;
  for (const auto& kernel : gemm_kernels())
    if (kernel.supported)
      names.push_back(kernel.name);
  return names;
}

bool same_bits(const std::vector<float>& x, const std::vector<float>& y) {
  return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(float)) == 0;
}

// The avx512 kernel's vectors, 16 floats, with portable code: its 8 x 32
// tiles run and are checked on hosts without AVX-512 too.
struct sixteen_fused_ops {
  struct vec {
    float lane[16];
  };
  static constexpr int width = 16;
  static vec zero() { return vec{}; }
  static vec load(const float* p) {
    vec v;
    std::memcpy(v.lane, p, sizeof v.lane);
    return v;
  }
  static void store(float* p, vec v) { std::memcpy(p, v.lane, sizeof v.lane); }
  static vec broadcast(float x) {
    vec v;
    for (float& lane : v.lane)
      lane = x;
    return v;
  }
  static vec mul(vec a, vec b) {
    for (int i = 0; i < width; ++i)
      a.lane[i] *= b.lane[i];
    return a;
  }
  static vec add(vec a, vec b) {
    for (int i = 0; i < width; ++i)
      a.lane[i] += b.lane[i];
    return a;
  }
  static vec multiply_add(vec a, vec b, vec acc) {
    for (int i = 0; i < width; ++i)
      acc.lane[i] = std::fma(a.lane[i], b.lane[i], acc.lane[i]);
    return acc;
  }
};

// Restores "auto" after a test that picked kernels by name.
struct auto_kernel_after {
  ~auto_kernel_after() { select_gemm_kernel("auto"); }
};

} // namespace

TEST_CASE("every kernel this CPU supports verifies and computes the product",
          "[gemm]") {
  auto_kernel_after restore;
  for (const auto& name : supported_kernels()) {
    for (bool ta : {false, true})
      for (bool tb : {false, true})
        for (float beta : {0.0f, 0.5f}) {
          problem p(ta, tb, 37, 45, 300, beta == 0 ? 1.0f : -1.5f, beta, 11);
          INFO("kernel " << name << " ta " << ta << " tb " << tb << " beta " << beta);
          const auto got = p.run(name);
          const auto want = p.exact_with_bound();
          for (size_t i = 0; i < got.size(); ++i)
            REQUIRE(std::abs(got[i] - want[i].first) <= want[i].second);
        }
  }
}

TEST_CASE("kernels of one family give the same bits on the model's shapes", "[gemm]") {
  auto_kernel_after restore;
  struct shape {
    bool ta, tb;
    int m, n, k;
  };
  // The five GEMMs of a 784-128relu-10 step at batch 32 and 7 (a short last batch).
  std::vector<shape> shapes;
  for (int batch : {32, 7})
    for (shape s : {shape{false, false, batch, 128, 784}, shape{false, false, batch, 10, 128},
                    shape{true, false, 128, 10, batch}, shape{false, true, batch, 128, 10},
                    shape{true, false, 784, 128, batch}})
      shapes.push_back(s);
  for (gemm_family family : {gemm_family::fused, gemm_family::unfused}) {
    std::vector<std::string> members;
    for (const auto& kernel : gemm_kernels())
      if (kernel.supported && kernel.family == family)
        members.push_back(kernel.name);
    for (const auto& s : shapes) {
      problem p(s.ta, s.tb, s.m, s.n, s.k, 1.0f, 0.0f, 5);
      std::vector<float> first;
      for (const auto& name : members) {
        INFO(to_string(family) << " kernel " << name << " on " << s.m << "x" << s.n << "x" << s.k);
        auto got = p.run(name);
        if (first.empty())
          first = got;
        else
          CHECK(same_bits(got, first));
      }
    }
  }
}

TEST_CASE("the fused and the unfused family compute different bits", "[gemm]") {
  auto_kernel_after restore;
  bool have_fused = false;
  std::string fused_name;
  for (const auto& kernel : gemm_kernels())
    if (kernel.supported && kernel.family == gemm_family::fused && !have_fused) {
      have_fused = true;
      fused_name = kernel.name;
    }
  if (!have_fused) {
    std::printf("troupe-test-skipped: this CPU has no FMA, so no fused kernel runs here\n");
    return;
  }
  problem p(false, false, 32, 128, 784, 1.0f, 0.0f, 3);
  // The family is what the handshake compares: it must decide the bits.
  CHECK_FALSE(same_bits(p.run(fused_name), p.run("portable")));
}

TEST_CASE("on a CPU with AVX2 and FMA the automatic choice is not the generic kernel",
          "[gemm]") {
  auto_kernel_after restore;
#if defined(__x86_64__)
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) {
    std::printf("troupe-test-skipped: this CPU has no AVX2 + FMA\n");
    return;
  }
  auto chosen = select_gemm_kernel("auto");
  REQUIRE(chosen);
  CHECK(chosen->name != "portable");
  CHECK(chosen->name != "fma128");
  CHECK(chosen->family == gemm_family::fused);
  CHECK(gemm_kernel_warning().empty());
  REQUIRE(select_gemm_kernel("portable"));
  CHECK_THAT(gemm_kernel_warning(), Catch::Contains("'portable' is in use")
                                      && Catch::Contains("other bits"));
#else
  std::printf("troupe-test-skipped: not an x86-64 CPU\n");
#endif
}

TEST_CASE("selecting a kernel by name says what is wrong", "[gemm]") {
  auto_kernel_after restore;
  auto unknown = select_gemm_kernel("blis");
  REQUIRE_FALSE(unknown);
  CHECK_THAT(unknown.error().message,
             Catch::Contains("unknown GEMM kernel 'blis'") && Catch::Contains("portable"));
  for (const auto& kernel : gemm_kernels())
    if (!kernel.supported) {
      auto refused = select_gemm_kernel(kernel.name);
      REQUIRE_FALSE(refused);
      CHECK_THAT(refused.error().message, Catch::Contains(kernel.needs));
    }
}

TEST_CASE("the build never fuses a multiply and an add on its own", "[gemm][numerics]") {
  // A contracting build computes other bits than one that is not: the
  // default build passes -ffp-contract=off (cmake/TroupeCompileOptions.cmake).
  CHECK_FALSE(build_contracts_multiply_add());
  const auto id = current_numerics();
  CHECK_THAT(id.build, Catch::Contains("-ffp-contract=off"));
  CHECK_FALSE(id.gemm_kernel.empty());
}

TEST_CASE("numerics identities differ in words that name the difference", "[numerics]") {
  auto mine = current_numerics();
  CHECK(numerics_difference(mine, mine).empty());
  auto other = mine;
  other.gemm_kernel = "fma128";
  CHECK(numerics_difference(mine, other).empty()); // one family, one set of bits
  other.gemm_family = mine.gemm_family == "fused" ? "unfused" : "fused";
  other.gemm_kernel = "portable";
  CHECK_THAT(numerics_difference(mine, other), Catch::Contains("GEMM family")
                                                 && Catch::Contains("portable"));
  other = mine;
  other.libm = "glibc 2.41 (FMA code paths)";
  CHECK_THAT(numerics_difference(mine, other), Catch::Contains("glibc 2.41"));
}

TEST_CASE("8 x 32 tiles of 16-float vectors reproduce the fused reference", "[gemm]") {
  using troupe::gemm_detail::gemm_args;
  struct shape {
    int m, n, k;
    float alpha, beta;
  };
  // Full and leftover rows and columns, a partial last vector, blocks of k.
  for (shape s : {shape{32, 128, 784, 1, 0}, shape{19, 10, 128, 1, 0}, shape{9, 47, 600, 1, 0},
                  shape{17, 33, 40, 0.5f, -0.25f}, shape{1, 1, 1, 1, 0}}) {
    INFO(s.m << "x" << s.n << "x" << s.k);
    problem p(false, false, s.m, s.n, s.k, s.alpha, s.beta, 1);
    auto c = p.c;
    auto expected = c;
    std::vector<float> scratch(static_cast<size_t>(s.k) * gemm_args::max_panel_width);
    gemm_args args;
    args.m = s.m;
    args.n = s.n;
    args.k = s.k;
    args.alpha = s.alpha;
    args.beta = s.beta;
    args.a = p.a.data();
    args.a_row_stride = s.k;
    args.a_k_stride = 1;
    args.b = p.b.data();
    args.ldb = s.n;
    args.ldc = s.n;
    args.scratch = scratch.data();
    args.c = c.data();
    troupe::gemm_detail::run_tiles<sixteen_fused_ops, 8, 2>(args);
    args.c = expected.data();
    troupe::gemm_detail::run_reference(
      args, [](float x, float y, float acc) { return std::fma(x, y, acc); });
    CHECK(std::memcmp(c.data(), expected.data(), c.size() * sizeof(float)) == 0);
  }
}
