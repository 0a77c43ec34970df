// The CUDA backend's softmax cross-entropy (loss, correct count, dlogits) and
// Adam update, checked against the CPU (Eigen) reference.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "model/optim/adam.hpp"
#include "tests/cuda/adam_drift_bound.hpp"
#include "tests/cuda/cuda_test_support.hpp"

using namespace troupe;
using namespace troupe::cuda_test;

namespace {

// Logits with the cases that break a naive kernel: ties for the max (the
// first must win), and values large enough that exp() overflows without the
// max subtracted.
std::vector<float> hard_logits(int rows, int classes, uint64_t seed) {
  auto z = random_floats(static_cast<size_t>(rows) * classes, seed, -4.0f, 4.0f);
  for (int r = 0; r < rows; r += 3) {
    float* row = z.data() + static_cast<size_t>(r) * classes;
    row[classes - 1] = 9.0f;
    row[r % (classes - 1)] = 9.0f;
  }
  for (int c = 0; c < classes; ++c)
    z[static_cast<size_t>(rows - 1) * classes + c] = 100.0f + static_cast<float>(c % 7);
  return z;
}

device_array<int32_t> labels_on_gpu(const std::vector<int32_t>& labels) {
  device_array<int32_t> array(gpu(), labels.size());
  array.upload(labels.data(), labels.size());
  return array;
}

} // namespace

TEST_CASE("softmax_cross_entropy matches the cpu: loss, correct count, dlogits",
          "[cuda][softmax]") {
  for (auto [rows, classes] : {std::pair{77, 10}, std::pair{40, 45}}) {
    INFO("rows " << rows << ", classes " << classes);
    const auto z = hard_logits(rows, classes, 60);
    auto labels = random_labels(rows, classes, 61);
    for (int r = 0; r < rows; r += 6)
      labels[r] = classes - 1; // some tied rows whose label is the later max
    const float scale = 1.0f / static_cast<float>(rows);
    const std::vector<float> stats0{1.5f, 2.0f}; // the op adds to what is there

    auto cpu_stats = stats0;
    std::vector<float> cpu_dz(z.size());
    cpu().softmax_cross_entropy(z.data(), labels.data(), rows, classes, scale,
                                cpu_dz.data(), cpu_stats.data());

    auto gpu_z = to_gpu(z);
    auto gpu_labels = labels_on_gpu(labels);
    auto gpu_stats = to_gpu(stats0);
    device_array<float> gpu_dz(gpu(), z.size());
    gpu().softmax_cross_entropy(gpu_z.data(), gpu_labels.data(), rows, classes,
                                scale, gpu_dz.data(), gpu_stats.data());
    const auto stats = to_host(gpu_stats);
    CHECK(std::isfinite(stats[0]));
    CHECK(stats[0] == Approx(cpu_stats[0]).epsilon(1e-5));
    CHECK(stats[1] == cpu_stats[1]);
    CHECK_CLOSE(to_host(gpu_dz), cpu_dz, 1e-7, 1e-4);

    { // a null dlogits gives the same stats
      auto gpu_stats_only = to_gpu(stats0);
      gpu().softmax_cross_entropy(gpu_z.data(), gpu_labels.data(), rows, classes,
                                  scale, nullptr, gpu_stats_only.data());
      const auto stats_only = to_host(gpu_stats_only);
      CHECK(stats_only[0] == Approx(cpu_stats[0]).epsilon(1e-5));
      CHECK(stats_only[1] == cpu_stats[1]);
    }
  }
}

TEST_CASE("adam_update matches the cpu over several steps", "[cuda][adam]") {
  const size_t count = 100003; // not a multiple of any block size
  auto cpu_w = random_floats(count, 70);
  auto cpu_m = random_floats(count, 71, -0.01f, 0.01f);
  auto cpu_v = random_floats(count, 72, 0.0f, 1e-4f);
  auto gpu_w = to_gpu(cpu_w), gpu_m = to_gpu(cpu_m), gpu_v = to_gpu(cpu_v);
  const optimizer_config config;
  adam_drift_bound bound(count); // why these bounds: adam_drift_bound.cpp
  for (uint64_t step = 1; step <= 3; ++step) {
    const auto g = random_floats(count, 80 + step, -0.1f, 0.1f);
    const adam_coefficients c = adam_step_coefficients(config, step);
    bound.step(cpu_w, g, cpu_m, cpu_v, c);
    cpu().adam_update(cpu_w.data(), g.data(), cpu_m.data(), cpu_v.data(), count, c);
    auto gpu_g = to_gpu(g);
    gpu().adam_update(gpu_w.data(), gpu_g.data(), gpu_m.data(), gpu_v.data(), count, c);
  }
  CHECK_WITHIN(to_host(gpu_m), cpu_m, bound.m());
  CHECK_WITHIN(to_host(gpu_v), cpu_v, bound.v());
  CHECK_WITHIN(to_host(gpu_w), cpu_w, bound.w());
}
