// The ops a store shard on the GPU steps with (--store-device): the weighted
// sum of a round's gradients, Adam on that sum in one pass, and the
// finiteness check, against the CPU.
#include <catch2/catch.hpp>

#include <cstring>
#include <limits>
#include <vector>

#include "model/optim/adam.hpp"
#include "model/optim/optimizer.hpp"
#include "tests/cuda/adam_drift_bound.hpp"
#include "tests/cuda/cuda_test_support.hpp"

using namespace troupe;
using namespace troupe::cuda_test;

TEST_CASE("weighted_sum matches the cpu bitwise for 1, 3, 8, 9 and 17 terms",
          "[cuda][store]") {
  constexpr size_t count = 50885; // half the model, not a multiple of a block
  for (size_t terms : {1u, 3u, 8u, 9u, 17u}) { // 8 a launch: 9 and 17 chain launches
    INFO(terms << " terms");
    std::vector<std::vector<float>> host(terms);
    std::vector<device_array<float>> on_gpu;
    std::vector<weighted_gradient> cpu_terms, gpu_terms;
    for (size_t t = 0; t < terms; ++t) {
      host[t] = random_floats(count, 100 + t);
      on_gpu.push_back(to_gpu(host[t]));
      const float weight = 1.0f / static_cast<float>(t + 3);
      cpu_terms.push_back({weight, host[t].data()});
      gpu_terms.push_back({weight, on_gpu.back().data()});
    }
    std::vector<float> expected(count);
    cpu().weighted_sum(cpu_terms, count, expected.data());
    device_array<float> out(gpu(), count);
    gpu().weighted_sum(gpu_terms, count, out.data());
    const auto got = to_host(out);
    CHECK(std::memcmp(got.data(), expected.data(), count * sizeof(float)) == 0);
  }
}

TEST_CASE("has_non_finite finds a NaN or an infinity anywhere and nothing in finite values",
          "[cuda][store]") {
  constexpr size_t count = 4099;
  const auto finite = random_floats(count, 7, -1e30f, 1e30f);
  CHECK_FALSE(gpu().has_non_finite(to_gpu(finite).data(), count));
  for (float bad : {std::numeric_limits<float>::quiet_NaN(),
                    std::numeric_limits<float>::infinity(),
                    -std::numeric_limits<float>::infinity()})
    for (size_t at : {size_t{0}, size_t{2048}, count - 1}) {
      auto values = finite;
      values[at] = bad;
      INFO(bad << " at " << at);
      CHECK(gpu().has_non_finite(to_gpu(values).data(), count));
    }
}

TEST_CASE("adam_update_sum tracks the cpu's sum-then-step for 2, 3 and 9 terms",
          "[cuda][store][adam]") {
  constexpr size_t count = 50885;
  const optimizer_config config;
  for (size_t terms : {2u, 3u, 9u}) { // 9: the first 8 summed apart, then one pass
    INFO(terms << " terms");
    auto cpu_w = random_floats(count, 170);
    auto cpu_m = random_floats(count, 171, -0.01f, 0.01f);
    auto cpu_v = random_floats(count, 172, 0.0f, 1e-4f);
    auto gpu_w = to_gpu(cpu_w), gpu_m = to_gpu(cpu_m), gpu_v = to_gpu(cpu_v);
    adam_drift_bound bound(count); // the GPU may fuse a product of each moment update
    for (uint64_t step = 1; step <= 3; ++step) {
      std::vector<std::vector<float>> host(terms);
      std::vector<device_array<float>> on_gpu;
      std::vector<weighted_gradient> cpu_terms, gpu_terms;
      for (size_t t = 0; t < terms; ++t) {
        host[t] = random_floats(count, 200 + 10 * step + t, -0.1f, 0.1f);
        on_gpu.push_back(to_gpu(host[t]));
        cpu_terms.push_back({1.0f / static_cast<float>(terms), host[t].data()});
        gpu_terms.push_back({1.0f / static_cast<float>(terms), on_gpu.back().data()});
      }
      std::vector<float> sum(count);
      weighted_gradient_sum(cpu_terms, 0, count, sum.data());
      const adam_coefficients c = adam_step_coefficients(config, step);
      bound.step(cpu_w, sum, cpu_m, cpu_v, c);
      cpu().adam_update_sum(cpu_w.data(), cpu_terms, cpu_m.data(), cpu_v.data(), count, c);
      gpu().adam_update_sum(gpu_w.data(), gpu_terms, gpu_m.data(), gpu_v.data(), count, c);
    }
    CHECK_WITHIN(to_host(gpu_m), cpu_m, bound.m());
    CHECK_WITHIN(to_host(gpu_v), cpu_v, bound.v());
    CHECK_WITHIN(to_host(gpu_w), cpu_w, bound.w());
  }
}

TEST_CASE("adam steps on the gpu skip themselves while their skip flag is set",
          "[cuda][store][adam]") {
  constexpr size_t count = 50885;
  const auto start = random_floats(count, 180);
  auto gpu_w = to_gpu(start), gpu_m = to_gpu(std::vector<float>(count, 0.0f));
  auto gpu_v = to_gpu(std::vector<float>(count, 0.0f));
  auto gradient = random_floats(count, 181, -0.1f, 0.1f);
  gradient[count / 2] = std::numeric_limits<float>::quiet_NaN();
  auto on_gpu = to_gpu(gradient);
  device_array<float> flag(gpu(), 1);
  gpu().fill_zero(flag.data(), sizeof(float));
  gpu().flag_non_finite(on_gpu.data(), count, flag.data()); // as a replica's step does
  adam_coefficients c = adam_step_coefficients(optimizer_config{}, 1);
  c.skip_if = flag.data();
  gpu().adam_update_sum(gpu_w.data(), {{0.5f, on_gpu.data()}, {0.5f, on_gpu.data()}},
                        gpu_m.data(), gpu_v.data(), count, c);
  gpu().adam_update(gpu_w.data(), on_gpu.data(), gpu_m.data(), gpu_v.data(), count, c);
  CHECK(to_host(gpu_w) == start);
  CHECK(to_host(gpu_m) == std::vector<float>(count, 0.0f));
  gpu().fill_zero(flag.data(), sizeof(float)); // a clear flag: the step runs
  gradient[count / 2] = 0.0f;
  auto finite = to_gpu(gradient);
  gpu().adam_update(gpu_w.data(), finite.data(), gpu_m.data(), gpu_v.data(), count, c);
  CHECK(to_host(gpu_w) != start);
}
