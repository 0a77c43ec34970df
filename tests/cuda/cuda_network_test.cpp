// The whole step on the GPU against the CPU: one gradient on a batch of the
// real Fashion-MNIST slice, then a few hundred Adam steps of training.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "model/data/dataset.hpp"
#include "model/network.hpp"
#include "model/optim/adam.hpp"
#include "model/parameter_layout.hpp"
#include "tests/cuda/cuda_test_support.hpp"
#include "tests/test_slice.hpp"

using namespace troupe;
using namespace troupe::cuda_test;

namespace {

model_spec mlp() {
  auto spec = parse_model_spec("784-128relu-10");
  REQUIRE(spec);
  return *spec;
}

const dataset& slice() { return test_slice().train; }

} // namespace

TEST_CASE("one gradient on the gpu matches the cpu on a batch of the slice",
          "[cuda][network]") {
  const auto spec = mlp();
  const auto& data = slice();
  network cpu_net(spec, cpu(), 64);
  network gpu_net(spec, gpu(), 64);
  const auto params = glorot_uniform_parameters(cpu_net.layout(), 7);
  cpu_net.use_parameters(params.data());
  gpu_net.use_parameters(params.data());
  // 64 fills the buffers; 17 is a partial batch after a full one.
  for (size_t batch : {size_t{64}, size_t{17}}) {
    INFO("batch " << batch);
    const float* images = data.input(100);
    const int32_t* labels = data.labels.data() + 100;
    std::vector<float> cpu_gradient(params.size()), gpu_gradient(params.size());
    const auto cpu_stats = cpu_net.compute_gradient(images, labels, batch, cpu_gradient.data());
    const auto gpu_stats = gpu_net.compute_gradient(images, labels, batch, gpu_gradient.data());
    CHECK(gpu_stats.samples == cpu_stats.samples);
    CHECK(gpu_stats.loss_sum == Approx(cpu_stats.loss_sum).epsilon(1e-5));
    CHECK(std::abs(gpu_stats.correct - cpu_stats.correct) <= 1); // a near-tie may flip
    // A pre-activation within rounding of 0 may switch a relu unit: atol covers it.
    CHECK_CLOSE(gpu_gradient, cpu_gradient, 1e-5, 1e-3);

    gpu_net.compute_gradient_on_device(images, labels, batch);
    const auto device_stats = gpu_net.take_stats();
    std::vector<float> device_gradient(params.size());
    gpu().copy_to_host(device_gradient.data(), gpu_net.device_gradient(),
                       params.size() * sizeof(float));
    CHECK(device_stats.loss_sum == Approx(gpu_stats.loss_sum).epsilon(1e-6));
    CHECK_CLOSE(device_gradient, gpu_gradient, 0.0, 0.0);
  }
}

TEST_CASE("evaluation on the gpu matches the cpu over the whole slice",
          "[cuda][network]") {
  const auto spec = mlp();
  const auto& data = slice();
  network cpu_net(spec, cpu(), 128);
  network gpu_net(spec, gpu(), 128);
  const auto params = glorot_uniform_parameters(cpu_net.layout(), 8);
  cpu_net.use_parameters(params.data());
  gpu_net.use_parameters(params.data());
  const auto count = static_cast<size_t>(data.count);
  const auto cpu_stats = cpu_net.evaluate(data.inputs.data(), data.labels.data(), count);
  const auto gpu_stats = gpu_net.evaluate(data.inputs.data(), data.labels.data(), count);
  CHECK(gpu_stats.samples == cpu_stats.samples);
  CHECK(gpu_stats.mean_loss() == Approx(cpu_stats.mean_loss()).epsilon(1e-5));
  CHECK(std::abs(gpu_stats.correct - cpu_stats.correct) <= 2);
}

// CPU: the network on Eigen and the host Adam. GPU: parameters, gradient and
// Adam's moments stay on the device and the stats accumulate there. The two
// runs drift apart by rounding only, so their losses must stay close.
TEST_CASE("three hundred adam steps on the gpu track the cpu's loss",
          "[cuda][network][training]") {
  const auto spec = mlp();
  const auto& data = slice();
  const size_t batch = 32, steps = 300, window = 50;
  network cpu_net(spec, cpu(), batch);
  network gpu_net(spec, gpu(), batch);
  const auto initial = glorot_uniform_parameters(cpu_net.layout(), 9);
  const size_t size = initial.size();
  const optimizer_config config; // Adam, lr 1e-3, eps 1e-7

  auto cpu_params = initial;
  std::vector<float> cpu_gradient(size);
  adam cpu_adam(config, size);
  gpu().copy_to_device(gpu_net.device_parameters(), initial.data(), size * sizeof(float));
  gpu_net.use_device_parameters();
  device_array<float> gpu_m(gpu(), size), gpu_v(gpu(), size);
  gpu().fill_zero(gpu_m.data(), size * sizeof(float));
  gpu().fill_zero(gpu_v.data(), size * sizeof(float));

  std::vector<uint32_t> order(static_cast<size_t>(data.count));
  std::iota(order.begin(), order.end(), 0u);
  std::vector<float> images(batch * static_cast<size_t>(data.features));
  std::vector<int32_t> labels(batch);
  double cpu_first = 0, gpu_first = 0;
  batch_stats cpu_window, gpu_window;
  for (size_t step = 0; step < steps; ++step) {
    const size_t begin = (step * batch) % (order.size() - batch);
    gather_batch(data, order.data() + begin, batch, images.data(), labels.data());

    cpu_net.use_parameters(cpu_params.data());
    const auto cpu_stats = cpu_net.compute_gradient(images.data(), labels.data(), batch,
                                                    cpu_gradient.data());
    cpu_adam.apply(cpu_params.data(), cpu_gradient.data());

    gpu_net.compute_gradient_on_device(images.data(), labels.data(), batch);
    gpu().adam_update(gpu_net.device_parameters(), gpu_net.device_gradient(),
                      gpu_m.data(), gpu_v.data(), size,
                      adam_step_coefficients(config, step + 1));

    if (step == 0) {
      cpu_first = cpu_stats.mean_loss();
      gpu_first = gpu_net.take_stats().mean_loss();
    } else if (step == steps - window - 1) {
      gpu_net.take_stats(); // the window's sums start with the next step
    }
    if (step >= steps - window)
      cpu_window += cpu_stats;
  }
  gpu_window = gpu_net.take_stats();
  REQUIRE(gpu_window.samples == static_cast<int64_t>(window * batch));

  CHECK(gpu_first == Approx(cpu_first).epsilon(1e-5));
  INFO("mean loss over the last " << window << " steps: cpu " << cpu_window.mean_loss()
                                  << ", gpu " << gpu_window.mean_loss());
  CHECK(cpu_window.mean_loss() < 0.6 * cpu_first); // it trained at all
  CHECK(gpu_window.mean_loss() == Approx(cpu_window.mean_loss()).epsilon(0.03));
  CHECK(std::abs(gpu_window.accuracy() - cpu_window.accuracy()) < 0.03);

  std::vector<float> gpu_params(size);
  gpu().copy_to_host(gpu_params.data(), gpu_net.device_parameters(), size * sizeof(float));
  // Both final parameter sets are evaluated on the CPU: only training differs.
  network cpu_eval(spec, cpu(), 256), gpu_trained_eval(spec, cpu(), 256);
  cpu_eval.use_parameters(cpu_params.data());
  gpu_trained_eval.use_parameters(gpu_params.data());
  const auto count = static_cast<size_t>(data.count);
  const auto cpu_final = cpu_eval.evaluate(data.inputs.data(), data.labels.data(), count);
  const auto gpu_final = gpu_trained_eval.evaluate(data.inputs.data(), data.labels.data(), count);
  INFO("final loss on the slice: cpu " << cpu_final.mean_loss() << ", gpu "
                                       << gpu_final.mean_loss());
  CHECK(gpu_final.mean_loss() == Approx(cpu_final.mean_loss()).epsilon(0.03));
}
