// Runs one layer on the CPU and on CUDA, and the comparisons the layer tests use.
#include "tests/cuda/cuda_layer_pair.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>

#include "model/backend/cuda/cuda_device_context.cuh"
#include "model/backend/cuda/layers/cuda_layer.cuh"
#include "model/layers/layer_spec.hpp"
#include "tests/cuda/cuda_test_support.hpp"

namespace troupe::cuda_test {

namespace {

// A device copy of a host vector, freed when it goes.
template <class T>
struct on_device {
  explicit on_device(const std::vector<T>& values) {
    REQUIRE(cudaMalloc(&data, std::max<size_t>(values.size(), 1) * sizeof(T)) == cudaSuccess);
    if (!values.empty())
      REQUIRE(cudaMemcpy(data, values.data(), values.size() * sizeof(T),
                         cudaMemcpyHostToDevice) == cudaSuccess);
    // A pageable copy may still be in flight when cudaMemcpy returns, and
    // the layer's stream does not wait for the legacy stream.
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  }
  explicit on_device(size_t count) : on_device(std::vector<T>(count)) {}
  ~on_device() { (void) cudaFree(data); }
  on_device(const on_device&) = delete;
  on_device& operator=(const on_device&) = delete;

  std::vector<T> host(size_t count) const {
    std::vector<T> values(count);
    if (count > 0)
      REQUIRE(cudaMemcpy(values.data(), data, count * sizeof(T), cudaMemcpyDeviceToHost) ==
              cudaSuccess);
    return values;
  }

  T* data = nullptr;
};

layer_pass run_gpu(const layer_spec& l, const layer_inputs& in,
                   const std::vector<float>& parameters, const std::vector<float>& dy) {
  auto context = cuda_detail::open_cuda_context(0);
  REQUIRE(context);
  auto layer = cuda_detail::make_cuda_layer(l, in.in, (*context)->get());
  REQUIRE(layer != nullptr);
  const size_t outputs = in.count * layer->output_shape().size();
  on_device<float> p(parameters), x(in.x), y(outputs), d(dy), dx(in.x.size()),
    dp(parameters.size());
  on_device<uint32_t> indices(in.indices);
  cuda_detail::device_pass_keys keys{in.seed, in.seed + 1,
                                     in.indices.empty() ? nullptr : indices.data, in.training};
  layer->forward(p.data, x.data, y.data, in.count, keys);
  layer->backward(p.data, x.data, y.data, d.data, dx.data, dp.data, in.count, keys);
  REQUIRE(cudaStreamSynchronize((*context)->get().stream) == cudaSuccess);
  return layer_pass{y.host(outputs), dx.host(in.x.size()), dp.host(parameters.size())};
}

} // namespace

layer_pair run_layer_pair(const std::string& token, const layer_inputs& in) {
  auto spec = parse_stack_spec(in.in.text() + "-" + token + "-flatten-2");
  INFO(token << " over " << in.in.text());
  REQUIRE(spec);
  REQUIRE(in.x.size() == in.count * in.in.size());
  const layer_spec l = spec->layers.front();
  auto ops = make_layer_ops(stack_spec{in.in, {l}});
  REQUIRE(ops);
  layer_op& cpu_op = *ops->front();
  const size_t outputs = in.count * cpu_op.output_shape().size();
  const auto parameters = random_floats(cpu_op.parameter_count(), in.seed + 2);
  const auto dy = random_floats(outputs, in.seed + 3);
  const pass_keys keys{in.seed, in.seed + 1, in.indices.empty() ? nullptr : in.indices.data(),
                       in.training};
  layer_pair pair;
  pair.cpu.y.resize(outputs);
  pair.cpu.dx.resize(in.x.size());
  pair.cpu.dparameters.resize(parameters.size());
  cpu_op.forward(parameters.data(), in.x.data(), pair.cpu.y.data(), in.count, keys);
  cpu_op.backward(parameters.data(), in.x.data(), pair.cpu.y.data(), dy.data(),
                  pair.cpu.dx.data(), pair.cpu.dparameters.data(), in.count, keys);
  pair.gpu = run_gpu(l, in, parameters, dy);
  return pair;
}

std::string compare_scaled(const std::vector<float>& gpu, const std::vector<float>& cpu,
                           double rtol) {
  if (gpu.size() != cpu.size())
    return "sizes differ: " + std::to_string(gpu.size()) + " vs " + std::to_string(cpu.size());
  double scale = 0;
  for (float v : cpu)
    scale = std::max(scale, std::abs(static_cast<double>(v)));
  std::vector<double> bounds(cpu.size());
  for (size_t i = 0; i < cpu.size(); ++i)
    bounds[i] = rtol * (std::abs(static_cast<double>(cpu[i])) + 0.1 * scale);
  return compare_arrays(gpu.data(), cpu.data(), cpu.size(), bounds.data());
}

size_t bit_differences(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size())
    return std::max(a.size(), b.size());
  size_t differ = 0;
  for (size_t i = 0; i < a.size(); ++i)
    differ += std::memcmp(&a[i], &b[i], sizeof(float)) != 0 ? 1 : 0;
  return differ;
}

} // namespace troupe::cuda_test
