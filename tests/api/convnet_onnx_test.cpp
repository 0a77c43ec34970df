// Convolutional networks trained on the Fashion-MNIST slice, their logits
// and their ONNX export: tests/scripts/check_onnx.py checks the file with
// onnx.checker and evaluates it with numpy, independently of Troupe, against
// Troupe's logits of every test sample.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include <sys/wait.h>

#include <troupe/troupe.hpp>

#include "../model/export/npy_file.hpp"
#include "../model/export/test_files.hpp"
#include "api_fixture.hpp"

namespace {

using api_fixture::quiet_run;
using api_fixture::slice;

// Trains `model` (compiled) one epoch and returns the trained model.
troupe::trained_model trained(troupe::sequential& model) {
  auto history = model.fit(slice().train, slice().test, quiet_run().epochs(1).batch_size(64));
  REQUIRE(history);
  return history->model;
}

// Requires softmax(logits) to be predict's probabilities, row by row.
void require_logits_give_predictions(const troupe::trained_model& model,
                                     const std::vector<float>& logits) {
  auto probabilities = model.predict(slice().test);
  REQUIRE(probabilities);
  REQUIRE(probabilities->size() == logits.size());
  const size_t classes = 10;
  double worst = 0;
  for (size_t row = 0; row < logits.size() / classes; ++row) {
    const float* z = logits.data() + row * classes;
    const float top = *std::max_element(z, z + classes);
    double sum = 0;
    for (size_t k = 0; k < classes; ++k)
      sum += std::exp(static_cast<double>(z[k]) - top);
    for (size_t k = 0; k < classes; ++k) {
      const double p = std::exp(static_cast<double>(z[k]) - top) / sum;
      worst = std::max(worst, std::abs(p - (*probabilities)[row * classes + k]));
    }
  }
  CHECK(worst < 1e-6);
}

// Exports `model`, writes the test set and Troupe's logits as .npy files and
// requires check_onnx.py to pass on them; prints what it printed.
void require_onnx_matches_troupe(const troupe::trained_model& model) {
  const troupe::dataset& test = slice().test;
  auto logits = model.logits(test);
  INFO((logits ? std::string() : logits.error().message));
  REQUIRE(logits);
  REQUIRE(logits->size() == static_cast<size_t>(test.count) * 10);
  require_logits_give_predictions(model, *logits);

  troupe::temp_dir dir;
  const std::string model_path = dir.file("model.onnx");
  auto exported = model.export_onnx(model_path);
  INFO((exported ? std::string() : exported.error().message));
  REQUIRE(exported);
  const auto rows = static_cast<size_t>(test.count);
  REQUIRE(troupe::write_npy(dir.file("x.npy"), test.inputs.data(), rows, test.features));
  REQUIRE(troupe::write_npy(dir.file("logits.npy"), logits->data(), rows, 10));

  const std::string output = dir.file("check_onnx.txt");
  const std::string command = std::string("'") + TROUPE_PYTHON3 + "' '" + TROUPE_CHECK_ONNX_SCRIPT
                              + "' '" + model_path + "' '" + dir.file("x.npy") + "' '"
                              + dir.file("logits.npy") + "' > '" + output + "' 2>&1";
  const int raw = std::system(command.c_str());
  const int code = raw != -1 && WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  INFO("command: " << command << "\nit printed:\n" << troupe::read_bytes(output));
  REQUIRE(code == 0);
  std::cout << model.description() << ":\n" << troupe::read_bytes(output);
}

} // namespace

TEST_CASE("a trained convnet exported to ONNX computes Troupe's logits of every test sample",
          "[api][convnet][export][onnx]") {
  namespace layers = troupe::layers;
  troupe::sequential model({28, 28, 1}, {layers::conv2d(8, 3, "relu"), layers::max_pool2d(2),
                                         layers::conv2d(8, 3, "relu"), layers::average_pool2d(2),
                                         layers::flatten(), layers::dropout(0.5f),
                                         layers::dense(16, "gelu"),
                                         layers::layer_normalization(),
                                         layers::dense(10, "softmax")});
  model.compile();
  auto text = model.description();
  REQUIRE(text);
  CHECK(*text == "28x28x1-conv8k3relu-maxpool2-conv8k3relu-avgpool2-flatten-dropout0.5-16gelu-"
                 "layernorm-10");
  require_onnx_matches_troupe(trained(model));
}

TEST_CASE("a convnet with strides, same padding, every activation, a normalized feature map "
          "and a global pool exports to ONNX with Troupe's logits",
          "[api][convnet][export][onnx]") {
  namespace layers = troupe::layers;
  troupe::sequential model({28, 28, 1}, {layers::conv2d(4, 3, "leaky_relu", 2),
                                         layers::layer_normalization(),
                                         layers::activation("sigmoid"),
                                         layers::conv2d(6, 4, "elu", 1, "same"),
                                         layers::global_average_pool2d(),
                                         layers::dense(12, "tanh"), layers::dense(10, "softmax")});
  model.compile();
  auto text = model.description();
  REQUIRE(text);
  CHECK(*text == "28x28x1-conv4k3s2leaky_relu-layernorm-sigmoid-conv6k4sameelu-globalavgpool-"
                 "12tanh-10");
  require_onnx_matches_troupe(trained(model));
}

TEST_CASE("a convnet with batch normalization learns its moving statistics, saves and loads "
          "them, and exports to ONNX with Troupe's logits",
          "[api][convnet][export][onnx][batch_normalization]") {
  namespace layers = troupe::layers;
  troupe::sequential model({28, 28, 1}, {layers::conv2d(6, 3), layers::batch_normalization(),
                                         layers::activation("relu"), layers::max_pool2d(2),
                                         layers::flatten(), layers::dense(16),
                                         layers::batch_normalization(),
                                         layers::activation("relu"),
                                         layers::dense(10, "softmax")});
  model.compile();
  auto text = model.description();
  REQUIRE(text);
  CHECK(*text == "28x28x1-conv6k3-batchnorm-relu-maxpool2-flatten-16-batchnorm-relu-10");
  const auto fitted = trained(model);
  // The first batch normalization's moving mean and variance follow the
  // conv's (6 x 3 x 3 + 6 parameters) gamma and beta: trained, they have
  // left their initial zeros and ones.
  const std::vector<float>& p = fitted.parameters();
  const size_t moving_mean = 60 + 12, moving_variance = moving_mean + 6;
  for (size_t c = 0; c < 6; ++c) {
    CHECK(p[moving_mean + c] != 0.0f);
    CHECK(p[moving_variance + c] != 1.0f);
    CHECK(p[moving_variance + c] > 0.0f);
  }
  troupe::temp_dir dir;
  const auto loaded = api_fixture::saved_and_loaded(fitted, dir.file("bn.troupe"), slice().test);
  CHECK(loaded.parameters() == p);
  require_onnx_matches_troupe(loaded);
}
