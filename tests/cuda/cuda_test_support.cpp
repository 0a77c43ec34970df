// The shared helpers of the CUDA tests (see cuda_test_support.hpp).
#include "tests/cuda/cuda_test_support.hpp"

#include <cmath>
#include <memory>
#include <sstream>

#include "model/backend/cpu/eigen_backend.hpp"
#include "model/random.hpp"

namespace troupe::cuda_test {

backend& cpu() {
  static std::unique_ptr<backend> reference = make_eigen_backend();
  return *reference;
}

std::vector<float> random_floats(size_t count, uint64_t seed, float low,
                                 float high) {
  random_stream stream(seed);
  std::vector<float> values(count);
  for (auto& value : values)
    value = low + (high - low) * stream.unit_float();
  return values;
}

std::vector<int32_t> random_labels(size_t count, int classes, uint64_t seed) {
  random_stream stream(seed);
  std::vector<int32_t> labels(count);
  for (auto& label : labels)
    label = static_cast<int32_t>(stream.below(static_cast<uint64_t>(classes)));
  return labels;
}

namespace {

// Compares with |gpu - cpu| <= bound(i, cpu) and describes the first failure.
template <class Bound>
std::string compare_with(const float* gpu_values, const float* cpu_values,
                         size_t count, Bound bound_of) {
  size_t failures = 0;
  std::ostringstream first;
  for (size_t i = 0; i < count; ++i) {
    const double g = gpu_values[i];
    const double c = cpu_values[i];
    const double bound = bound_of(i, c);
    if (std::fabs(g - c) <= bound)
      continue;
    if (failures++ == 0) {
      first.precision(9);
      first << "first mismatch at index " << i << ": gpu " << g << ", cpu " << c
            << ", |diff| " << std::fabs(g - c) << " > bound " << bound;
    }
  }
  if (failures == 0)
    return "";
  return first.str() + " (" + std::to_string(failures) + " of "
         + std::to_string(count) + " elements fail)";
}

} // namespace

std::string compare_arrays(const float* gpu_values, const float* cpu_values,
                           size_t count, double atol, double rtol) {
  return compare_with(gpu_values, cpu_values, count, [&](size_t, double c) {
    return atol + rtol * std::fabs(c);
  });
}

std::string compare_arrays(const float* gpu_values, const float* cpu_values,
                           size_t count, const double* bounds) {
  return compare_with(gpu_values, cpu_values, count,
                      [&](size_t i, double) { return bounds[i]; });
}

device_array<float> to_gpu(const std::vector<float>& values) {
  device_array<float> array(gpu(), values.size());
  array.upload(values.data(), values.size());
  return array;
}

std::vector<float> to_host(const device_array<float>& values) {
  std::vector<float> host(values.size());
  values.download(host.data(), host.size());
  return host;
}

} // namespace troupe::cuda_test
