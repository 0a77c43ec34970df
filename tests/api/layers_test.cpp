// Every layer of a convolutional stack against finite differences, through
// the public model seam (make_model and check_gradient), which differentiates
// the training pass: dropout with the batch's mask, batch normalization by
// the batch's statistics.
#include <catch2/catch.hpp>

#include <random>
#include <string>
#include <vector>

#include <troupe/troupe.hpp>

#include "api_fixture.hpp"

namespace {

void check_layers(const std::string& text, size_t count) {
  INFO(text);
  auto model = troupe::make_model(text);
  REQUIRE(model);
  const auto& train = api_fixture::slice().train;
  // With noise: in an image's flat regions (zero patches under zero biases,
  // near-equal values in a pool's window) ReLU and max pooling sit on their
  // kinks, where finite differences see another slope than the gradient.
  std::vector<float> images(train.inputs.begin(), train.inputs.begin() + count * 784);
  std::mt19937 random(5);
  std::uniform_real_distribution<float> noise(0.0f, 0.5f);
  for (float& v : images)
    v += noise(random);
  troupe::batch samples{images.data(), train.labels.data(), count, 784};
  auto report = troupe::check_gradient(**model, samples);
  REQUIRE(report);
  INFO("worst excess " << report->worst_excess << " at parameter " << report->worst_index
       << ": analytic " << report->worst_analytic << ", numeric " << report->worst_numeric);
  CHECK(report->passed);
}

} // namespace

TEST_CASE("every layer's gradient matches finite differences: conv2d with strides and "
          "relu, max pooling, flatten, dense",
          "[api][layers][gradient]") {
  // Small stacks: a float sum over thousands of terms rounds differently for
  // every perturbed parameter, noise that finite differences would divide
  // by the step.
  check_layers("28x28x1-conv2k3s3relu-maxpool2-flatten-10", 6);
  check_layers("28x28x1-conv2k5s3-conv3k3s2relu-flatten-8relu-10", 6);
  check_layers("28x28x1-maxpool4-conv2k3-maxpool2-flatten-10", 6);
  // Same padding, with a stride, and odd and even amounts of it.
  check_layers("28x28x1-avgpool4-conv2k3same-conv2k4s2sametanh-flatten-10", 6);
}

TEST_CASE("average pooling, global average pooling and every activation match finite "
          "differences, on layers and as layers of their own",
          "[api][layers][gradient]") {
  check_layers("28x28x1-avgpool4-conv3k3tanh-globalavgpool-10", 6);
  check_layers("28x28x1-avgpool4-conv2k3sigmoid-avgpool2-flatten-8elu-10", 6);
  check_layers("28x28x1-maxpool4-flatten-12gelu-8leaky_relu-10", 6);
  check_layers("28x28x1-avgpool7-flatten-gelu-8-tanh-sigmoid-10", 6);
}

TEST_CASE("layer normalization, over channels and over a flat vector, matches finite "
          "differences",
          "[api][layers][gradient]") {
  check_layers("28x28x1-avgpool4-conv3k3-layernorm-flatten-10", 6);
  check_layers("28x28x1-avgpool4-flatten-16relu-layernorm-10", 6);
}

TEST_CASE("batch normalization, over channels and over a flat vector, and dropout with the "
          "batch's mask match finite differences",
          "[api][layers][gradient][batch_normalization]") {
  check_layers("28x28x1-avgpool4-conv3k3-batchnorm-relu-flatten-10", 6);
  check_layers("28x28x1-avgpool4-flatten-16-batchnorm-tanh-10", 6);
  check_layers("28x28x1-avgpool4-conv3k3relu-flatten-dropout0.3-12-batchnorm-10", 6);
}
