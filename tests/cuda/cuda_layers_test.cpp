// Every built-in layer's CUDA twin against the CPU op, forward and backward.
// Bounds: where the two sides sum in different orders (the GEMMs of conv2d and
// dense: cuBLAS splits and fuses its sums, Troupe's GEMM blocks them its own
// way; layer and batch normalization's column sums; CUDA's expf, tanhf, erff, expm1f)
// each value may differ by a few roundings of its terms, far below 1e-4 of
// its size (or of a tenth of the array's largest, where terms cancel).
// Where both sides compute the same operations in the same order (pooling,
// flatten, dropout) the bits must be equal.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "tests/cuda/cuda_layer_pair.hpp"
#include "tests/cuda/cuda_test_support.hpp"

using namespace troupe;
using namespace troupe::cuda_test;

namespace {

constexpr double gemm_rtol = 1e-4;
constexpr double math_rtol = 2e-5; // CUDA's float functions are within 2 ulps

layer_inputs inputs(tensor_shape in, size_t count, uint64_t seed) {
  layer_inputs i;
  i.in = in;
  i.count = count;
  i.x = random_floats(count * in.size(), seed);
  i.seed = seed;
  return i;
}

void check_near(const layer_pair& pair, double rtol) {
  CHECK_SCALED(pair.gpu.y, pair.cpu.y, rtol);
  CHECK_SCALED(pair.gpu.dx, pair.cpu.dx, rtol);
  CHECK_SCALED(pair.gpu.dparameters, pair.cpu.dparameters, rtol);
}

void check_bits(const layer_pair& pair) {
  CHECK(bit_differences(pair.gpu.y, pair.cpu.y) == 0);
  CHECK(bit_differences(pair.gpu.dx, pair.cpu.dx) == 0);
  CHECK(bit_differences(pair.gpu.dparameters, pair.cpu.dparameters) == 0);
}

} // namespace

TEST_CASE("conv2d on cuda matches the cpu with strides, same padding and odd sizes",
          "[cuda][layers]") {
  struct conv_case {
    const char* token;
    tensor_shape in;
  };
  const conv_case cases[] = {
    {"conv8k3", {28, 28, 1}},          // the convnet's first layer
    {"conv6k3s2same", {9, 7, 3}},      // odd sides, stride 2, padding split unevenly
    {"conv5k2s3", {11, 10, 4}},        // stride above the kernel: inputs no column reads
    {"conv4k5same", {6, 5, 2}},        // a kernel wider than half the input
    {"conv3k3s2sametanh", {7, 7, 9}},  // 9 channels: the CPU's copy path for channels >= 8
    {"conv4k1gelu", {5, 3, 6}},        // gelu keeps its input for backward
  };
  for (const auto& c : cases) {
    INFO(c.token << " over " << c.in.text());
    check_near(run_layer_pair(c.token, inputs(c.in, 3, 11)), gemm_rtol);
  }
}

TEST_CASE("dense on cuda matches the cpu with each activation", "[cuda][layers]") {
  for (const char* token : {"37", "16relu", "9tanh", "10sigmoid", "12leaky_relu", "8elu",
                            "11gelu"}) {
    INFO(token);
    check_near(run_layer_pair(token, inputs({1, 1, 53}, 5, 12)), gemm_rtol);
  }
}

TEST_CASE("max pooling on cuda gives the cpu's bits, ties to the first in row order",
          "[cuda][layers]") {
  auto in = inputs({9, 7, 3}, 4, 13); // 9 x 7: the last row and column are dropped
  for (float& v : in.x)
    v = std::floor(v * 2.0f); // four levels: most windows hold ties
  check_bits(run_layer_pair("maxpool2", in));
  check_bits(run_layer_pair("maxpool3", in));
  for (float& v : in.x)
    v = 0.5f; // every window one tie
  check_bits(run_layer_pair("maxpool2", in));
}

TEST_CASE("average and global average pooling on cuda give the cpu's bits",
          "[cuda][layers]") {
  const auto in = inputs({9, 7, 5}, 3, 14);
  check_bits(run_layer_pair("avgpool2", in));
  check_bits(run_layer_pair("avgpool3", in));
  check_bits(run_layer_pair("globalavgpool", in));
}

TEST_CASE("flatten on cuda gives the cpu's bits", "[cuda][layers]") {
  check_bits(run_layer_pair("flatten", inputs({3, 5, 2}, 4, 15)));
}

TEST_CASE("dropout on cuda drops exactly the values the cpu drops", "[cuda][layers]") {
  auto in = inputs({6, 5, 4}, 7, 16);
  SECTION("keyed by each sample's row") {}
  SECTION("keyed by the samples' indices in the training set") {
    in.indices = {901, 17, 4, 59999, 0, 3, 1234};
  }
  for (const char* token : {"dropout0.5", "dropout0.25", "dropout0.9"}) {
    INFO(token);
    const auto masked = run_layer_pair(token, in);
    check_bits(masked);
    // Ones in, so the outputs are the mask itself (0 or the scale).
    auto ones = in;
    ones.x.assign(in.x.size(), 1.0f);
    const auto mask = run_layer_pair(token, ones);
    check_bits(mask);
    size_t dropped = 0;
    for (float v : mask.gpu.y)
      dropped += v == 0.0f ? 1 : 0;
    CHECK(dropped > 0);
    CHECK(dropped < mask.gpu.y.size());
  }
  in.training = false; // evaluation: the identity
  check_bits(run_layer_pair("dropout0.5", in));
}

TEST_CASE("each activation layer on cuda matches the cpu", "[cuda][layers]") {
  auto in = inputs({4, 3, 5}, 3, 17);
  for (float& v : in.x)
    v *= 3.0f; // both tails of tanh, sigmoid, elu and gelu
  for (const char* token : {"relu", "tanh", "sigmoid", "leaky_relu", "elu", "gelu"}) {
    INFO(token);
    check_near(run_layer_pair(token, in), math_rtol);
  }
}

TEST_CASE("batch normalization on cuda matches the cpu in training, the moving statistics' "
          "asked change included",
          "[cuda][layers][batch_normalization]") {
  check_near(run_layer_pair("batchnorm", inputs({5, 3, 7}, 3, 23)), gemm_rtol);
  check_near(run_layer_pair("batchnorm", inputs({1, 1, 33}, 6, 24)), gemm_rtol);
}

TEST_CASE("layer normalization on cuda matches the cpu", "[cuda][layers]") {
  check_near(run_layer_pair("layernorm", inputs({5, 3, 7}, 3, 18)), gemm_rtol);
  check_near(run_layer_pair("layernorm", inputs({1, 1, 33}, 6, 19)), gemm_rtol);
}
