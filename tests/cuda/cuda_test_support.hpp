// What the CUDA tests share: the one CUDA backend main() opened, the CPU
// reference backend, seeded random arrays and the CPU-vs-GPU comparison.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "model/backend/backend.hpp"

namespace troupe::cuda_test {

/// Returns the CUDA backend that main() created before running the tests.
backend& gpu();

/// Returns a CPU (Eigen) backend, the reference, created on first use.
backend& cpu();

/// Returns `count` floats drawn uniformly from [low, high) with `seed`.
std::vector<float> random_floats(size_t count, uint64_t seed, float low = -1.0f,
                                 float high = 1.0f);

/// Returns `count` labels drawn uniformly from [0, classes) with `seed`.
std::vector<int32_t> random_labels(size_t count, int classes, uint64_t seed);

/// Compares element by element with |gpu - cpu| <= atol + rtol * |cpu|.
/// Returns "" when all pass, else the first failing index, both values, the
/// bound, and how many failed in all (NaN always fails).
std::string compare_arrays(const float* gpu_values, const float* cpu_values,
                           size_t count, double atol, double rtol);

/// Compares element by element with |gpu - cpu| <= bounds[i], and reports as
/// the overload above does.
std::string compare_arrays(const float* gpu_values, const float* cpu_values,
                           size_t count, const double* bounds);

/// Copies `values` into a new array on the GPU.
device_array<float> to_gpu(const std::vector<float>& values);

/// Copies a GPU array back to the host.
std::vector<float> to_host(const device_array<float>& values);

} // namespace troupe::cuda_test

/// Checks two float vectors with compare_arrays and reports the first mismatch.
#define CHECK_CLOSE(gpu_vector, cpu_vector, atol, rtol)                        \
  do {                                                                         \
    const auto& gpu_values_ = (gpu_vector);                                    \
    const auto& cpu_values_ = (cpu_vector);                                    \
    REQUIRE(gpu_values_.size() == cpu_values_.size());                         \
    const std::string mismatch_ = ::troupe::cuda_test::compare_arrays(         \
      gpu_values_.data(), cpu_values_.data(), cpu_values_.size(), (atol),      \
      (rtol));                                                                 \
    INFO(#gpu_vector " vs " #cpu_vector ": " << mismatch_);                    \
    CHECK(mismatch_.empty());                                                  \
  } while (false)

/// Checks two float vectors against per-element bounds (a std::vector<double>).
#define CHECK_WITHIN(gpu_vector, cpu_vector, bound_vector)                     \
  do {                                                                         \
    const auto& gpu_values_ = (gpu_vector);                                    \
    const auto& cpu_values_ = (cpu_vector);                                    \
    const auto& bounds_ = (bound_vector);                                      \
    REQUIRE(gpu_values_.size() == cpu_values_.size());                         \
    REQUIRE(bounds_.size() == cpu_values_.size());                             \
    const std::string mismatch_ = ::troupe::cuda_test::compare_arrays(         \
      gpu_values_.data(), cpu_values_.data(), cpu_values_.size(),              \
      bounds_.data());                                                         \
    INFO(#gpu_vector " vs " #cpu_vector ": " << mismatch_);                    \
    CHECK(mismatch_.empty());                                                  \
  } while (false)
