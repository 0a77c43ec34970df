// The avx512 kernel's tile shape (8 rows x 2 vectors of 16) with portable
// 16-float vectors, so its loop logic runs and is checked on hosts without
// AVX-512 too; only the AVX-512 instructions themselves need such a host.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <vector>

#include "model/backend/cpu/gemm/gemm_tiles.hpp"

namespace {

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

std::vector<float> random_floats(size_t count, uint32_t seed) {
  std::vector<float> x(count);
  for (auto& value : x) {
    seed = seed * 1664525u + 1013904223u;
    value = static_cast<float>(seed >> 8) / static_cast<float>(1u << 23) - 1.0f;
  }
  return x;
}

} // namespace

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
    auto a = random_floats(static_cast<size_t>(s.m) * s.k, 1);
    auto b = random_floats(static_cast<size_t>(s.k) * s.n, 2);
    auto c = random_floats(static_cast<size_t>(s.m) * s.n, 3);
    auto expected = c;
    std::vector<float> scratch(static_cast<size_t>(s.k) * gemm_args::max_panel_width);
    gemm_args args;
    args.m = s.m;
    args.n = s.n;
    args.k = s.k;
    args.alpha = s.alpha;
    args.beta = s.beta;
    args.a = a.data();
    args.a_row_stride = s.k;
    args.a_k_stride = 1;
    args.b = b.data();
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
