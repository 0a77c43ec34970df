// A whole layered model on CUDA against the same model on the CPU: the Keras
// MNIST convnet's gradient, loss, evaluation and predictions on a few samples
// of the Fashion-MNIST slice; two CUDA runs give the same bits; a layer with
// no CUDA twin is refused by name.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "model/backend/cuda/cuda_layered_model.hpp"
#include "model/layers/layer_ops.hpp"
#include "model/layers/layered_model.hpp"
#include "model/layers/layered_model_on.hpp"
#include "tests/cuda/cuda_layer_pair.hpp"
#include "tests/cuda/cuda_test_support.hpp"
#include "tests/test_slice.hpp"

using namespace troupe;
using namespace troupe::cuda_test;

namespace {

const std::string convnet =
  "28x28x1-conv32k3relu-maxpool2-conv64k3relu-maxpool2-flatten-dropout0.5-10";

struct convnet_batch {
  size_t count = 16;
  std::vector<uint32_t> indices;
  batch samples;
};

convnet_batch slice_batch(size_t first, size_t count) {
  const auto& data = test_slice().train;
  convnet_batch b;
  b.count = count;
  b.indices.resize(count);
  std::iota(b.indices.begin(), b.indices.end(), static_cast<uint32_t>(first));
  b.samples.features = data.input(first);
  b.samples.labels = data.labels.data() + first;
  b.samples.count = count;
  b.samples.inputs = data.features;
  b.samples.indices = b.indices.data();
  b.samples.step = 3;
  b.samples.seed = 42;
  return b;
}

// The gradient through two conv layers, pooling and dropout: a relu whose
// input lies within rounding of zero may switch on one side only and move a
// few values by a term of their sums. So nearly every value must meet the
// layers' bound and all of them a looser one.
void check_gradient(const std::vector<float>& gpu, const std::vector<float>& cpu) {
  double scale = 0;
  for (float v : cpu)
    scale = std::max(scale, std::abs(static_cast<double>(v)));
  size_t outside = 0;
  for (size_t i = 0; i < cpu.size(); ++i) {
    const double difference = std::abs(static_cast<double>(gpu[i]) - cpu[i]);
    outside += difference > 1e-3 * (std::abs(cpu[i]) + 0.1 * scale) ? 1 : 0;
  }
  INFO(outside << " of " << cpu.size() << " values outside 1e-3 of their size");
  CHECK(outside <= cpu.size() / 1000);
  CHECK_SCALED(gpu, cpu, 5e-2);
}

} // namespace

TEST_CASE("the convnet's gradient on cuda matches the cpu's on the slice",
          "[cuda][layers][convnet]") {
  auto cpu_model = make_layered_model(convnet);
  auto gpu_model = make_layered_model_on(convnet, "cuda:0");
  REQUIRE(cpu_model);
  INFO((gpu_model ? std::string() : gpu_model.error().message));
  REQUIRE(gpu_model);
  REQUIRE((*gpu_model)->parameter_count() == (*cpu_model)->parameter_count());
  std::vector<float> parameters((*cpu_model)->parameter_count());
  (*cpu_model)->initialize(7, parameters.data());
  std::vector<float> gpu_initial(parameters.size());
  (*gpu_model)->initialize(7, gpu_initial.data());
  CHECK(bit_differences(gpu_initial, parameters) == 0);
  // 16 fills the buffers; 5 is a partial batch after a full one.
  for (size_t count : {size_t{16}, size_t{5}}) {
    INFO("batch " << count);
    const auto b = slice_batch(100, count);
    std::vector<float> cpu_gradient(parameters.size()), gpu_gradient(parameters.size());
    const auto cpu_result = (*cpu_model)->gradient(parameters.data(), b.samples,
                                                   cpu_gradient.data());
    const auto gpu_result = (*gpu_model)->gradient(parameters.data(), b.samples,
                                                   gpu_gradient.data());
    CHECK(gpu_result.loss_sum == Approx(cpu_result.loss_sum).epsilon(1e-5));
    CHECK(std::abs(gpu_result.correct - cpu_result.correct) <= 1); // a near-tie may flip
    check_gradient(gpu_gradient, cpu_gradient);

    const auto cpu_eval = (*cpu_model)->evaluate(parameters.data(), b.samples);
    const auto gpu_eval = (*gpu_model)->evaluate(parameters.data(), b.samples);
    CHECK(gpu_eval.loss_sum == Approx(cpu_eval.loss_sum).epsilon(1e-5));
    std::vector<float> cpu_out(count * 10), gpu_out(count * 10);
    (*cpu_model)->predict(parameters.data(), b.samples.features, count, cpu_out.data());
    (*gpu_model)->predict(parameters.data(), b.samples.features, count, gpu_out.data());
    CHECK_CLOSE(gpu_out, cpu_out, 1e-6, 1e-4);
  }
}

TEST_CASE("the convnet on cuda gives the same bits run after run", "[cuda][layers][convnet]") {
  auto first = make_layered_model_on(convnet, "cuda:0");
  auto second = make_layered_model_on(convnet, "cuda:0");
  REQUIRE(first);
  REQUIRE(second);
  std::vector<float> parameters((*first)->parameter_count());
  (*first)->initialize(9, parameters.data());
  const auto b = slice_batch(0, 32);
  std::vector<float> a(parameters.size()), again(parameters.size()), other(parameters.size());
  const auto result_a = (*first)->gradient(parameters.data(), b.samples, a.data());
  const auto result_again = (*first)->gradient(parameters.data(), b.samples, again.data());
  const auto result_other = (*second)->gradient(parameters.data(), b.samples, other.data());
  CHECK(bit_differences(a, again) == 0);
  CHECK(bit_differences(a, other) == 0);
  CHECK(result_a.loss_sum == result_again.loss_sum);
  CHECK(result_a.loss_sum == result_other.loss_sum);
  CHECK(result_a.correct == result_other.correct);
}

TEST_CASE("a layered model on cuda gives the cpu's logits with every kind of layer",
          "[cuda][layers]") {
  const std::string text = "12x10x3-conv6k3s2samegelu-layernorm-avgpool2-conv4k1elu-"
                           "batchnorm-globalavgpool-tanh-flatten-dropout0.3-7sigmoid-5";
  auto cpu_model = make_layered_stack(text);
  REQUIRE(cpu_model);
  auto spec = parse_stack_spec(text);
  auto reference = make_layered_model(text);
  REQUIRE(spec);
  REQUIRE(reference);
  auto opened = make_cuda_layered_model(*spec, std::move(*reference), 0);
  INFO((opened ? std::string() : opened.error().message));
  REQUIRE(opened);
  std::vector<float> parameters((*cpu_model)->parameter_count());
  (*cpu_model)->initialize(5, parameters.data());
  const auto features = random_floats(6 * 12 * 10 * 3, 21);
  std::vector<float> cpu_logits(6 * 5), gpu_logits(6 * 5);
  (*cpu_model)->logits(parameters.data(), features.data(), 6, cpu_logits.data());
  (*opened)->logits(parameters.data(), features.data(), 6, gpu_logits.data());
  CHECK_SCALED(gpu_logits, cpu_logits, 1e-4);
}

TEST_CASE("a stack with a layer that has no cuda twin is refused by its index",
          "[cuda][layers]") {
  register_layer("cuda_test_identity", [](const std::string&, tensor_shape in)
                                         -> expected<std::unique_ptr<layer_op>> {
    return make_flatten(in);
  });
  auto refused = make_layered_model_on("4x4x1-flatten-@cuda_test_identity-3", "cuda:0");
  REQUIRE(!refused);
  INFO(refused.error().message);
  CHECK(refused.error().message.find("layer 1 ('@cuda_test_identity')") != std::string::npos);
  CHECK(refused.error().message.find("no CUDA implementation") != std::string::npos);
}
