// The CUDA backend's memory ops, gemm and the bias / activation ops, each
// checked against the CPU (Eigen) reference.
#include <catch2/catch.hpp>

#include <vector>

#include "tests/cuda/cuda_test_support.hpp"

using namespace troupe;
using namespace troupe::cuda_test;

TEST_CASE("the cuda backend names its device and keeps memory off the host",
          "[cuda][memory]") {
  CHECK(gpu().name() == "cuda:0");
  CHECK_FALSE(gpu().host_memory());
}

TEST_CASE("memory round-trips through host and device copies and fill_zero",
          "[cuda][memory]") {
  const auto values = random_floats(1001, 1);
  auto first = to_gpu(values);
  device_array<float> second(gpu(), values.size());
  // A device source: the copy stays on the device.
  gpu().copy_to_device(second.data(), first.data(), values.size() * sizeof(float));
  CHECK(to_host(second) == values);
  gpu().fill_zero(first.data(), 10 * sizeof(float));
  auto zeroed = to_host(first);
  CHECK(std::vector<float>(zeroed.begin(), zeroed.begin() + 10) == std::vector<float>(10, 0.0f));
  CHECK(std::vector<float>(zeroed.begin() + 10, zeroed.end())
        == std::vector<float>(values.begin() + 10, values.end()));
}

TEST_CASE("gemm matches the cpu for every transpose combination and beta",
          "[cuda][gemm]") {
  const int m = 37, n = 23, k = 19; // odd sizes: no accidental square layouts
  for (bool transpose_a : {false, true})
    for (bool transpose_b : {false, true})
      for (float beta : {0.0f, 1.0f}) {
        INFO("transpose_a " << transpose_a << ", transpose_b " << transpose_b
                            << ", beta " << beta);
        const auto a = random_floats(static_cast<size_t>(m) * k, 10);
        const auto b = random_floats(static_cast<size_t>(k) * n, 11);
        const auto c0 = random_floats(static_cast<size_t>(m) * n, 12);
        auto cpu_c = c0;
        cpu().gemm(transpose_a, transpose_b, m, n, k, 0.75f, a.data(), b.data(),
                   beta, cpu_c.data());
        auto gpu_a = to_gpu(a), gpu_b = to_gpu(b), gpu_c = to_gpu(c0);
        gpu().gemm(transpose_a, transpose_b, m, n, k, 0.75f, gpu_a.data(),
                   gpu_b.data(), beta, gpu_c.data());
        CHECK_CLOSE(to_host(gpu_c), cpu_c, 1e-5, 1e-5);
      }
}

TEST_CASE("gemm matches the cpu at the first layer's shapes", "[cuda][gemm]") {
  // forward x w: (32, 784) (784, 128); weight gradient x^T delta: (784, 128)
  const int batch = 32, in = 784, out = 128;
  const auto x = random_floats(static_cast<size_t>(batch) * in, 20, 0.0f, 1.0f);
  const auto w = random_floats(static_cast<size_t>(in) * out, 21, -0.08f, 0.08f);
  const auto delta = random_floats(static_cast<size_t>(batch) * out, 22, -0.01f, 0.01f);
  std::vector<float> cpu_y(static_cast<size_t>(batch) * out);
  std::vector<float> cpu_dw(static_cast<size_t>(in) * out);
  cpu().gemm(false, false, batch, out, in, 1.0f, x.data(), w.data(), 0.0f, cpu_y.data());
  cpu().gemm(true, false, in, out, batch, 1.0f, x.data(), delta.data(), 0.0f, cpu_dw.data());
  auto gpu_x = to_gpu(x), gpu_w = to_gpu(w), gpu_delta = to_gpu(delta);
  device_array<float> gpu_y(gpu(), cpu_y.size()), gpu_dw(gpu(), cpu_dw.size());
  gpu().gemm(false, false, batch, out, in, 1.0f, gpu_x.data(), gpu_w.data(), 0.0f, gpu_y.data());
  gpu().gemm(true, false, in, out, batch, 1.0f, gpu_x.data(), gpu_delta.data(), 0.0f,
             gpu_dw.data());
  CHECK_CLOSE(to_host(gpu_y), cpu_y, 1e-5, 1e-4);
  CHECK_CLOSE(to_host(gpu_dw), cpu_dw, 1e-6, 1e-4);
}

TEST_CASE("bias_activation adds the bias and applies relu or nothing exactly",
          "[cuda][bias_activation]") {
  const int rows = 33, cols = 130;
  const auto bias = random_floats(cols, 31);
  for (activation act : {activation::none, activation::relu}) {
    INFO("activation " << (act == activation::relu ? "relu" : "none"));
    auto cpu_y = random_floats(static_cast<size_t>(rows) * cols, 30);
    auto gpu_y = to_gpu(cpu_y);
    auto gpu_bias = to_gpu(bias);
    cpu().bias_activation(cpu_y.data(), bias.data(), rows, cols, act);
    gpu().bias_activation(gpu_y.data(), gpu_bias.data(), rows, cols, act);
    CHECK_CLOSE(to_host(gpu_y), cpu_y, 0.0, 0.0);
  }
}

TEST_CASE("activation_backward zeroes dy where relu was off and keeps the rest",
          "[cuda][activation_backward]") {
  const size_t count = 4099;
  auto y = random_floats(count, 40);
  for (size_t i = 0; i < count; i += 3)
    y[i] = 0.0f; // a relu output is never negative; 0 is the boundary
  for (auto& value : y)
    value = value < 0.0f ? 0.0f : value;
  const auto dy0 = random_floats(count, 41);
  auto gpu_y = to_gpu(y);
  for (activation act : {activation::none, activation::relu}) {
    INFO("activation " << (act == activation::relu ? "relu" : "none"));
    auto cpu_dy = dy0;
    auto gpu_dy = to_gpu(dy0);
    cpu().activation_backward(cpu_dy.data(), y.data(), count, act);
    gpu().activation_backward(gpu_dy.data(), gpu_y.data(), count, act);
    CHECK_CLOSE(to_host(gpu_dy), cpu_dy, 0.0, 0.0);
  }
}

TEST_CASE("bias_gradient sums the columns of dy", "[cuda][bias_gradient]") {
  for (auto [rows, cols] : {std::pair{1000, 130}, std::pair{3, 10}, std::pair{0, 7}}) {
    INFO("rows " << rows << ", cols " << cols);
    const auto dy = random_floats(static_cast<size_t>(rows) * cols, 50);
    std::vector<float> cpu_db(cols, 123.0f);
    cpu().bias_gradient(dy.data(), rows, cols, cpu_db.data());
    auto gpu_dy = to_gpu(dy);
    auto gpu_db = to_gpu(std::vector<float>(cols, 123.0f)); // overwritten, not added to
    gpu().bias_gradient(gpu_dy.data(), rows, cols, gpu_db.data());
    CHECK_CLOSE(to_host(gpu_db), cpu_db, 1e-5, 1e-5);
  }
}
