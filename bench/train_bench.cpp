// Single-replica training speed on the CPU backend, and in the same run the
// time of the step's GEMMs alone and of one Adam update, so the loop's distance
// from its compute limit is visible.
//
//   build/bench/train_bench [data-dir] [epochs]
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "model/backend/cpu/eigen_backend.hpp"
#include "model/local_trainer.hpp"
#include "model/optim/adam.hpp"

using namespace troupe;

namespace {

using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point start) {
  return std::chrono::duration<double>(clock_type::now() - start).count();
}

// Times the five GEMMs of one training step of `layout` at `batch` (forward
// x W for both layers, then dW for both layers and dx for the second).
double gemm_seconds_per_step(backend& compute, const parameter_layout& layout,
                             int batch, int repeats) {
  const auto& l0 = layout.layers()[0];
  const auto& l1 = layout.layers()[1];
  std::vector<float> x(batch * l0.in, 0.5f), w0(l0.in * l0.out, 0.01f),
    h(batch * l0.out), w1(l1.in * l1.out, 0.01f), z(batch * l1.out),
    dw0(w0.size()), dw1(w1.size()), dh(h.size());
  auto step = [&] {
    compute.gemm(false, false, batch, l0.out, l0.in, 1, x.data(), w0.data(), 0, h.data());
    compute.gemm(false, false, batch, l1.out, l1.in, 1, h.data(), w1.data(), 0, z.data());
    compute.gemm(true, false, l1.in, l1.out, batch, 1, h.data(), z.data(), 0, dw1.data());
    compute.gemm(false, true, batch, l1.in, l1.out, 1, z.data(), w1.data(), 0, dh.data());
    compute.gemm(true, false, l0.in, l0.out, batch, 1, x.data(), dh.data(), 0, dw0.data());
  };
  for (int i = 0; i < repeats / 10; ++i)
    step();
  const auto start = clock_type::now();
  for (int i = 0; i < repeats; ++i)
    step();
  return seconds_since(start) / repeats;
}

double adam_seconds_per_update(size_t size, int repeats) {
  adam optim(optimizer_config{}, size);
  std::vector<float> w(size, 0.1f), g(size, 0.01f);
  optim.apply(w.data(), g.data());
  const auto start = clock_type::now();
  for (int i = 0; i < repeats; ++i)
    optim.apply(w.data(), g.data());
  return seconds_since(start) / repeats;
}

} // namespace

int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : default_data_dir();
  const int epochs = argc > 2 ? std::stoi(argv[2]) : 2;
  auto data = load_dataset(dir);
  if (!data) {
    std::fprintf(stderr, "error: %s\n", data.error().message.c_str());
    return 1;
  }
  auto spec = *parse_model_spec("784-128relu-10");
  const parameter_layout layout(spec);
  auto compute = make_eigen_backend();
  const double flops_per_sample =
    2.0 * (784 * 128 + 128 * 10)          // forward
    + 2.0 * (784 * 128 + 2 * 128 * 10);   // dW0, dW1, dx1
  const double adam_s = adam_seconds_per_update(layout.size(), 2000);
  fmt::print("model 784-128relu-10 ({} parameters), {} training samples, 1 thread\n",
             layout.size(), data->train.count);
  fmt::print("adam update: {:.1f} us\n", adam_s * 1e6);
  for (int batch : {32, 128}) {
    auto trainer = local_trainer::make(spec, *compute, optimizer_config{}, 1, batch);
    double seconds = 0;
    size_t samples = 0, steps = 0;
    for (int epoch = 0; epoch < epochs; ++epoch) {
      auto report = trainer->run_epoch(data->train, epoch);
      seconds += report.seconds;
      samples += static_cast<size_t>(report.train.samples);
      steps += report.steps;
    }
    const double gemm_s = gemm_seconds_per_step(*compute, layout, batch, 2000);
    const double step_s = seconds / steps;
    const double limit = batch / (gemm_s + adam_s);
    fmt::print("batch {:4}: {:8.0f} samples/s | step {:6.1f} us = gemm {:6.1f} us "
               "({:5.1f} GFLOP/s) + adam {:4.1f} us + other {:5.1f} us | "
               "gemm+adam limit {:8.0f} samples/s ({:3.0f}% reached)\n",
               batch, samples / seconds, step_s * 1e6, gemm_s * 1e6,
               flops_per_sample * batch / gemm_s * 1e-9, adam_s * 1e6,
               (step_s - gemm_s - adam_s) * 1e6, limit,
               100.0 * (samples / seconds) / limit);
  }
  return 0;
}
