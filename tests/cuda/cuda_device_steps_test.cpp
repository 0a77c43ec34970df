// The device-driven step on the GPU: the ops that read the step counters, a
// recorded CUDA graph against the same ops queued one by one, and the
// device-resident trainer against itself unrecorded and against the CPU.
#include <catch2/catch.hpp>

#include <cmath>
#include <numeric>
#include <vector>

#include "model/train/device_trainer.hpp"
#include "model/optim/adam.hpp"
#include "tests/cuda/adam_drift_bound.hpp"
#include "tests/cuda/cuda_test_support.hpp"
#include "tests/test_slice.hpp"

using namespace troupe;
using namespace troupe::cuda_test;

namespace {

template <class T>
device_array<T> upload(const std::vector<T>& values) {
  device_array<T> array(gpu(), values.size());
  array.upload(values.data(), values.size());
  return array;
}

template <class T>
std::vector<T> download(const device_array<T>& array) {
  std::vector<T> values(array.size());
  array.download(values.data(), values.size());
  return values;
}

} // namespace

TEST_CASE("gather_rows, advance_step and counted adam match the cpu",
          "[cuda][device_steps]") {
  const int features = 784, count = 300, rows = 37;
  const auto images = random_floats(static_cast<size_t>(count) * features, 90, 0.0f, 1.0f);
  const auto labels = random_labels(count, 10, 91);
  std::vector<uint32_t> order(count);
  std::iota(order.rbegin(), order.rend(), 0u); // reversed: every row moves
  step_counters counters;
  counters.cursor = 250;
  counters.steps = 4;

  std::vector<float> cpu_batch(static_cast<size_t>(rows) * features);
  std::vector<int32_t> cpu_labels(rows);
  step_counters cpu_counters = counters;
  cpu().resident_ops()->gather_rows(images.data(), labels.data(), features, order.data(), &cpu_counters,
                    rows, cpu_batch.data(), cpu_labels.data());
  cpu().resident_ops()->advance_step(&cpu_counters, rows);

  auto gpu_images = upload(images);
  auto gpu_labels = upload(labels);
  auto gpu_order = upload(order);
  auto gpu_counters = upload(std::vector<step_counters>{counters});
  device_array<float> gpu_batch(gpu(), cpu_batch.size());
  device_array<int32_t> gpu_batch_labels(gpu(), rows);
  gpu().resident_ops()->gather_rows(gpu_images.data(), gpu_labels.data(), features, gpu_order.data(),
                    gpu_counters.data(), rows, gpu_batch.data(), gpu_batch_labels.data());
  gpu().resident_ops()->advance_step(gpu_counters.data(), rows);
  CHECK(download(gpu_batch) == cpu_batch);
  CHECK(download(gpu_batch_labels) == cpu_labels);
  const auto advanced = download(gpu_counters)[0];
  CHECK(advanced.cursor == cpu_counters.cursor);
  CHECK(advanced.steps == cpu_counters.steps);

  // Adam at the advanced step (t = 5), then at t = 6 after one more advance.
  const size_t size = 100003;
  auto cpu_w = random_floats(size, 92), cpu_m = random_floats(size, 93, -0.01f, 0.01f);
  auto cpu_v = random_floats(size, 94, 0.0f, 1e-4f);
  auto gpu_w = to_gpu(cpu_w), gpu_m = to_gpu(cpu_m), gpu_v = to_gpu(cpu_v);
  const optimizer_config config;
  adam_drift_bound bound(size); // why these bounds: adam_drift_bound.cpp
  for (int round = 0; round < 2; ++round) {
    const auto g = random_floats(size, 95 + round, -0.1f, 0.1f);
    auto gpu_g = to_gpu(g);
    bound.step(cpu_w, g, cpu_m, cpu_v,
               adam_step_coefficients(config, static_cast<uint64_t>(cpu_counters.steps)));
    cpu().resident_ops()->adam_update_counted(cpu_w.data(), g.data(), cpu_m.data(), cpu_v.data(), size,
                              adam_settings(config), &cpu_counters);
    gpu().resident_ops()->adam_update_counted(gpu_w.data(), gpu_g.data(), gpu_m.data(), gpu_v.data(),
                              size, adam_settings(config), gpu_counters.data());
    cpu().resident_ops()->advance_step(&cpu_counters, 0);
    gpu().resident_ops()->advance_step(gpu_counters.data(), 0);
  }
  CHECK_WITHIN(to_host(gpu_m), cpu_m, bound.m());
  CHECK_WITHIN(to_host(gpu_v), cpu_v, bound.v());
  CHECK_WITHIN(to_host(gpu_w), cpu_w, bound.w());
}

TEST_CASE("a recorded graph replays exactly what the ops compute one by one",
          "[cuda][device_steps][graph]") {
  const int rows = 4099;
  const auto x0 = random_floats(rows, 100);
  const auto y0 = random_floats(rows, 101);
  const auto bias = random_floats(1, 102);
  auto eager_x = to_gpu(x0), eager_y = to_gpu(y0);
  auto replayed_x = to_gpu(x0), replayed_y = to_gpu(y0);
  auto gpu_bias = to_gpu(bias);
  // Each op reads what the one before wrote: x = relu(x + b); y += 0.5 x b.
  auto queue_ops = [&](float* x, float* y) {
    gpu().bias_activation(x, gpu_bias.data(), rows, 1, activation::relu);
    gpu().gemm(false, false, rows, 1, 1, 0.5f, x, gpu_bias.data(), 1.0f, y);
  };
  auto recorded = gpu().resident_ops()->record([&] { queue_ops(replayed_x.data(), replayed_y.data()); });
  INFO((recorded ? std::string() : recorded.error().message));
  REQUIRE(recorded);
  CHECK(to_host(replayed_y) == y0); // recording runs nothing
  for (int i = 0; i < 3; ++i) {
    queue_ops(eager_x.data(), eager_y.data());
    (*recorded)->replay();
  }
  CHECK(to_host(replayed_x) == to_host(eager_x));
  CHECK(to_host(replayed_y) == to_host(eager_y));
  CHECK(to_host(replayed_y) != y0);
}

TEST_CASE("the device trainer on the gpu: recorded equals unrecorded bitwise and tracks the cpu",
          "[cuda][device_steps][training]") {
  const auto& data = test_slice();
  auto spec = parse_model_spec("784-128relu-10");
  REQUIRE(spec);
  for (size_t batch : {size_t{32}, size_t{300}}) { // 300 leaves a batch of 200
    INFO("batch " << batch);
    auto recorded = device_trainer::make(*spec, gpu(), data.train, optimizer_config{}, 4,
                                         batch, true);
    auto unrecorded = device_trainer::make(*spec, gpu(), data.train, optimizer_config{}, 4,
                                           batch, false);
    auto on_cpu = device_trainer::make(*spec, cpu(), data.train, optimizer_config{}, 4,
                                       batch, false);
    REQUIRE(recorded);
    REQUIRE(unrecorded);
    REQUIRE(on_cpu);
    CHECK((*recorded)->parameters() == (*on_cpu)->parameters()); // the same start
    for (uint64_t epoch = 0; epoch < 2; ++epoch) {
      const auto a = (*recorded)->run_epoch(epoch);
      const auto b = (*unrecorded)->run_epoch(epoch);
      const auto c = (*on_cpu)->run_epoch(epoch);
      INFO("epoch " << epoch << " mean loss: recorded " << a.train.mean_loss()
                    << ", unrecorded " << b.train.mean_loss() << ", cpu "
                    << c.train.mean_loss());
      CHECK(a.steps == c.steps);
      CHECK(a.train.samples == c.train.samples);
      CHECK(a.train.loss_sum == Approx(b.train.loss_sum).epsilon(1e-5));
      CHECK(a.train.mean_loss() == Approx(c.train.mean_loss()).epsilon(0.03));
      CHECK(std::abs(a.train.accuracy() - c.train.accuracy()) < 0.03);
    }
    CHECK((*recorded)->step_mode().rfind("recorded", 0) == 0);
    // The graph holds the very kernels and cuBLAS calls the ops queue.
    CHECK((*recorded)->parameters() == (*unrecorded)->parameters());
    const auto gpu_test = (*recorded)->evaluate(data.test);
    const auto cpu_test = (*on_cpu)->evaluate(data.test);
    CHECK(gpu_test.accuracy() == Approx(cpu_test.accuracy()).margin(0.03));
  }
}
