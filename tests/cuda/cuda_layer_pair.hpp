// One built-in layer run on the CPU and as its CUDA twin over the same
// inputs, parameters and output gradient, for the per-layer tests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "model/layers/layer.hpp"

namespace troupe::cuda_test {

/// Holds one side's forward output, input gradient and parameter gradient.
struct layer_pass {
  std::vector<float> y, dx, dparameters;
};

/// Holds both sides' passes.
struct layer_pair {
  layer_pass cpu, gpu;
};

/// Says what the pair runs over: the input values (count samples of `in`),
/// the seed of the random parameters and output gradient, and the keys.
struct layer_inputs {
  tensor_shape in;
  size_t count = 0;
  std::vector<float> x;
  uint64_t seed = 1;
  bool training = true;
  std::vector<uint32_t> indices; // empty: each sample's row
};

/// Runs the layer written `token` in a layered model's text ("conv8k3s2same",
/// "maxpool2") forward and backward on both sides; fails the test when the
/// token does not parse or has no twin.
layer_pair run_layer_pair(const std::string& token, const layer_inputs& inputs);

/// Compares element by element with |gpu - cpu| <= rtol * (|cpu| + 0.1 * max |cpu|):
/// relative to each value, with a floor at a tenth of the array's scale for
/// values that cancel to near zero. Returns "" when all pass.
std::string compare_scaled(const std::vector<float>& gpu, const std::vector<float>& cpu,
                           double rtol);

/// Returns how many values differ in their bits (NaN payloads aside).
size_t bit_differences(const std::vector<float>& a, const std::vector<float>& b);

} // namespace troupe::cuda_test

/// Checks two float vectors with compare_scaled.
#define CHECK_SCALED(gpu_vector, cpu_vector, rtol)                             \
  do {                                                                         \
    const std::string mismatch_ =                                              \
      ::troupe::cuda_test::compare_scaled((gpu_vector), (cpu_vector), (rtol)); \
    INFO(#gpu_vector " vs " #cpu_vector ": " << mismatch_);                    \
    CHECK(mismatch_.empty());                                                  \
  } while (false)
