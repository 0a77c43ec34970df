// The ops a store shard on the GPU steps with (--store-device): the weighted
// sum of a round's gradients and the finiteness check, against the CPU.
#include <catch2/catch.hpp>

#include <cstring>
#include <limits>
#include <vector>

#include "model/optim/optimizer.hpp"
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
