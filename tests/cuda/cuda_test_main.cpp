// main() of the CUDA tests: opens cuda:0 once, or says why it cannot and exits
// 77 so that ctest reports the binary as skipped rather than passed.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdio>
#include <memory>

#include "model/backend/cuda/cuda_backend.hpp"
#include "tests/cuda/cuda_test_support.hpp"

namespace {

constexpr int skip_exit_code = 77;
std::unique_ptr<troupe::backend> the_gpu;

} // namespace

namespace troupe::cuda_test {

backend& gpu() { return *the_gpu; }

} // namespace troupe::cuda_test

int main(int argc, char* argv[]) {
  auto opened = troupe::make_cuda_backend(0);
  if (!opened) {
    std::printf("SKIPPED: no usable CUDA device (%s)\n",
                opened.error().message.c_str());
    return skip_exit_code;
  }
  the_gpu = std::move(*opened);
  const int failures = Catch::Session().run(argc, argv);
  the_gpu.reset();
  // 77 failed tests must not read as "skipped".
  return failures == skip_exit_code ? 1 : failures;
}
