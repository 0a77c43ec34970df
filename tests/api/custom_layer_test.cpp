// A layer of one's own, registered by name and stacked between built-in
// layers: its gradient passes check_gradient with theirs, the stack trains,
// saves, loads and predicts, and a name nobody registered is refused.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <troupe/troupe.hpp>

#include "api_fixture.hpp"

namespace {

using api_fixture::quiet_run;
using api_fixture::slice;

// y = x * s[c] + t[c] per channel c: a learnable affine map of one's own,
// starting at s = start (its settings), t = 0.
class channel_affine final : public troupe::layer_op {
public:
  channel_affine(troupe::tensor_shape in, float start) : shape_(in), start_(start) {}

  troupe::tensor_shape output_shape() const override { return shape_; }
  size_t parameter_count() const override { return 2 * channels(); }

  void initialize(uint64_t, float* parameters) const override {
    for (size_t c = 0; c < channels(); ++c) {
      parameters[c] = start_;
      parameters[channels() + c] = 0.0f;
    }
  }

  void forward(const float* p, const float* x, float* y, size_t count,
               const troupe::pass_keys&) override {
    for (size_t i = 0; i < count * shape_.size(); ++i)
      y[i] = x[i] * p[i % channels()] + p[channels() + i % channels()];
  }

  void backward(const float* p, const float* x, const float*, const float* dy, float* dx,
                float* dp, size_t count, const troupe::pass_keys&) override {
    std::fill_n(dp, parameter_count(), 0.0f);
    for (size_t i = 0; i < count * shape_.size(); ++i) {
      const size_t c = i % channels();
      dp[c] += dy[i] * x[i];
      dp[channels() + c] += dy[i];
      if (dx != nullptr)
        dx[i] = dy[i] * p[c];
    }
  }

private:
  size_t channels() const { return static_cast<size_t>(shape_.channels); }

  troupe::tensor_shape shape_;
  float start_;
};

void register_channel_affine() {
  troupe::register_layer(
    "channel_affine",
    [](const std::string& settings,
       troupe::tensor_shape in) -> troupe::expected<std::unique_ptr<troupe::layer_op>> {
      char* end = nullptr;
      const float start = settings.empty() ? 1.0f : std::strtof(settings.c_str(), &end);
      if (!settings.empty() && *end != '\0')
        return troupe::fail(troupe::errc::invalid_argument,
                            "settings '" + settings + "' are not a number");
      return std::unique_ptr<troupe::layer_op>(std::make_unique<channel_affine>(in, start));
    });
}

} // namespace

TEST_CASE("a registered layer stacks between built-in ones: gradient, training, save, load "
          "and predict",
          "[api][layers][custom]") {
  register_channel_affine();
  namespace layers = troupe::layers;
  troupe::sequential model({28, 28, 1}, {layers::conv2d(4, 3, "relu"),
                                         layers::custom("channel_affine", "-0.5"),
                                         layers::max_pool2d(2), layers::flatten(),
                                         layers::dense(10, "softmax")});
  model.compile();
  auto text = model.description();
  REQUIRE(text);
  CHECK(*text == "28x28x1-conv4k3relu-@channel_affine(-0.5)-maxpool2-flatten-10");

  auto built = troupe::make_model("28x28x1-avgpool4-@channel_affine(0.7)-flatten-10");
  REQUIRE(built);
  const auto& train = slice().train;
  std::vector<float> images(train.inputs.begin(), train.inputs.begin() + 6 * 784);
  std::mt19937 random(3);
  std::uniform_real_distribution<float> noise(0.0f, 0.5f);
  for (float& v : images)
    v += noise(random);
  auto report = troupe::check_gradient(**built, troupe::batch{images.data(),
                                                               train.labels.data(), 6, 784});
  REQUIRE(report);
  CHECK(report->passed);

  auto history = model.fit(slice().train, slice().test, quiet_run().epochs(2).batch_size(64));
  REQUIRE(history);
  CHECK(history->val_accuracy > 0.5);
  const auto loaded =
    api_fixture::saved_and_loaded(history->model, "custom_layer_test.troupe", slice().test);
  auto logits = loaded.logits(slice().test);
  REQUIRE(logits);
  CHECK(logits->size() == slice().test.labels.size() * 10);
  const std::string onnx_path = "custom_layer_test.onnx";
  auto onnx = loaded.export_onnx(onnx_path);
  REQUIRE_FALSE(onnx);
  CHECK_THAT(onnx.error().message, Catch::Contains("layer 1 ('@channel_affine')")
                                     && Catch::Contains("no ONNX form"));
  CHECK_FALSE(std::ifstream(onnx_path).good());

  auto unknown = troupe::make_model("28x28x1-@nobody-flatten-10");
  REQUIRE_FALSE(unknown);
  CHECK_THAT(unknown.error().message, Catch::Contains("no layer is registered as 'nobody'")
                                        && Catch::Contains("layer 0 ('@nobody')"));
  auto bad = troupe::make_model("28x28x1-@channel_affine(x)-flatten-10");
  REQUIRE_FALSE(bad);
  CHECK_THAT(bad.error().message, Catch::Contains("settings 'x' are not a number"));
}
