// Single-replica training speed on the CPU backend, and in the same run the
// time of the step's GEMMs alone (with Troupe's kernel and, where it was
// found at build time, OpenBLAS's) and of one Adam update, so the loop's
// distance from its compute limit is visible.
//
//   build/bench/train_bench [data-dir] [epochs] [gemm-kernel: auto|avx512|avx2|fma128|portable]
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include <fmt/core.h>
#ifdef TROUPE_BENCH_OPENBLAS
#  include TROUPE_CBLAS_HEADER
#endif

#include "model/backend/cpu/eigen_backend.hpp"
#include "model/backend/cpu/gemm/gemm.hpp"
#include "model/train/local_trainer.hpp"
#include "model/optim/adam.hpp"

using namespace troupe;

namespace {

using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point start) {
  return std::chrono::duration<double>(clock_type::now() - start).count();
}

// The five GEMMs of one training step of `layout` at `batch` (forward x W for
// both layers, then dW for both layers and dx for the second), as a call of
// gemm(transpose_a, transpose_b, m, n, k, a, b, c) with alpha 1 and beta 0.
template <class gemm_call>
double gemm_seconds_per_step(const parameter_layout& layout, int batch, int repeats,
                             gemm_call gemm) {
  const auto& l0 = layout.layers()[0];
  const auto& l1 = layout.layers()[1];
  std::vector<float> x(batch * l0.in, 0.5f), w0(l0.in * l0.out, 0.01f),
    h(batch * l0.out), w1(l1.in * l1.out, 0.01f), z(batch * l1.out),
    dw0(w0.size()), dw1(w1.size()), dh(h.size());
  auto step = [&] {
    gemm(false, false, batch, l0.out, l0.in, x.data(), w0.data(), h.data());
    gemm(false, false, batch, l1.out, l1.in, h.data(), w1.data(), z.data());
    gemm(true, false, l1.in, l1.out, batch, h.data(), z.data(), dw1.data());
    gemm(false, true, batch, l1.in, l1.out, z.data(), w1.data(), dh.data());
    gemm(true, false, l0.in, l0.out, batch, x.data(), dh.data(), dw0.data());
  };
  for (int i = 0; i < repeats / 10; ++i)
    step();
  const auto start = clock_type::now();
  for (int i = 0; i < repeats; ++i)
    step();
  return seconds_since(start) / repeats;
}

double troupe_gemm_seconds(const parameter_layout& layout, int batch, int repeats) {
  return gemm_seconds_per_step(layout, batch, repeats,
                               [](bool ta, bool tb, int m, int n, int k, const float* a,
                                  const float* b, float* c) {
                                 troupe::detail::gemm(ta, tb, m, n, k, 1.0f, a, b, 0.0f, c);
                               });
}

#ifdef TROUPE_BENCH_OPENBLAS
double openblas_gemm_seconds(const parameter_layout& layout, int batch, int repeats) {
  return gemm_seconds_per_step(
    layout, batch, repeats,
    [](bool ta, bool tb, int m, int n, int k, const float* a, const float* b, float* c) {
      cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
                  m, n, k, 1.0f, a, ta ? m : k, b, tb ? k : n, 0.0f, c, n);
    });
}
#endif

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
  const std::string kernel_name = argc > 3 ? argv[3] : "auto";
  auto kernel = select_gemm_kernel(kernel_name);
  if (!kernel) {
    std::fprintf(stderr, "error: %s\n", kernel.error().message.c_str());
    return 2;
  }
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
  fmt::print("GEMM kernel: {} ({} multiply-add)\n", kernel->name, to_string(kernel->family));
  if (auto warning = gemm_kernel_warning(); !warning.empty())
    fmt::print("warning: {}\n", warning);
#ifdef TROUPE_BENCH_OPENBLAS
  openblas_set_num_threads(1);
  fmt::print("for comparison:{}({} kernel)\n", OPENBLAS_VERSION,
             openblas_get_corename());
#endif
  fmt::print("adam update: {:.1f} us\n", adam_s * 1e6);
  // 16: the per-replica batch of the 2-core sync figure (global batch 32 over
  // 2 replicas), whose GEMMs run slower per sample than batch 32's. Last, so
  // that batch 32, the base of the scripts' ratios, still runs first.
  for (int batch : {32, 128, 16}) {
    auto trainer = local_trainer::make(spec, *compute, optimizer_config{}, 1, batch);
    double seconds = 0;
    size_t samples = 0, steps = 0;
    for (int epoch = 0; epoch < epochs; ++epoch) {
      auto report = trainer->run_epoch(data->train, epoch);
      seconds += report.seconds;
      samples += static_cast<size_t>(report.train.samples);
      steps += report.steps;
    }
    const double gemm_s = troupe_gemm_seconds(layout, batch, 2000);
    const double step_s = seconds / steps;
    const double limit = batch / (gemm_s + adam_s);
    fmt::print("batch {:4}: {:8.0f} samples/s | step {:6.1f} us = gemm {:6.1f} us "
               "({:5.1f} GFLOP/s) + adam {:4.1f} us + other {:5.1f} us | "
               "gemm+adam limit {:8.0f} samples/s ({:3.0f}% reached)\n",
               batch, samples / seconds, step_s * 1e6, gemm_s * 1e6,
               flops_per_sample * batch / gemm_s * 1e-9, adam_s * 1e6,
               (step_s - gemm_s - adam_s) * 1e6, limit,
               100.0 * (samples / seconds) / limit);
#ifdef TROUPE_BENCH_OPENBLAS
    const double openblas_s = openblas_gemm_seconds(layout, batch, 2000);
    fmt::print("            the same GEMMs with OpenBLAS {}: {:6.1f} us ({:5.1f} GFLOP/s)\n",
               openblas_get_corename(), openblas_s * 1e6,
               flops_per_sample * batch / openblas_s * 1e-9);
#endif
  }
  return 0;
}
