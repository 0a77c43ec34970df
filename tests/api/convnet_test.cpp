// The Keras mnist_convnet's layers on the public API: a sequential stack of
// conv2d, max_pool2d, flatten, dropout and dense trains on the Fashion-MNIST
// slice, saves and loads to the same predictions, and a stack that does not
// fit is refused naming the layer.
#include <catch2/catch.hpp>

#include <cstdio>
#include <string>
#include <vector>

#include <troupe/troupe.hpp>

#include "api_fixture.hpp"

namespace {

using api_fixture::quiet_run;
using api_fixture::slice;

troupe::sequential small_convnet(float dropout) {
  namespace layers = troupe::layers;
  troupe::sequential model({28, 28, 1}, {layers::conv2d(8, 3, "relu"), layers::max_pool2d(2),
                                         layers::conv2d(8, 3, "relu"), layers::max_pool2d(2),
                                         layers::flatten(), layers::dropout(dropout),
                                         layers::dense(10, "softmax")});
  model.compile();
  return model;
}

} // namespace

TEST_CASE("a sequential convnet trains, learns, and saves and loads to the same predictions",
          "[api][convnet]") {
  auto model = small_convnet(0.25f);
  auto text = model.description();
  REQUIRE(text);
  CHECK(*text == "28x28x1-conv8k3relu-maxpool2-conv8k3relu-maxpool2-flatten-dropout0.25-10");
  auto history = model.fit(slice().train, slice().test, quiet_run().epochs(3).batch_size(64));
  REQUIRE(history);
  CHECK(history->epochs.back().loss < history->epochs.front().loss);
  CHECK(history->val_accuracy > 0.6); // chance is 0.1
  const auto loaded =
    api_fixture::saved_and_loaded(history->model, "convnet_test.troupe", slice().test);
  auto scored = loaded.evaluate(slice().test);
  REQUIRE(scored);
  CHECK(scored->accuracy == history->val_accuracy);
  auto logits = loaded.logits(slice().test);
  REQUIRE(logits);
  CHECK(logits->size() == slice().test.labels.size() * 10);
  // The same run again: the same bits.
  auto again = small_convnet(0.25f).fit(slice().train, slice().test,
                                        quiet_run().epochs(3).batch_size(64));
  REQUIRE(again);
  CHECK(again->params_fnv1a64 == history->params_fnv1a64);
}

TEST_CASE("a convolutional stack that does not fit is refused naming the layer",
          "[api][convnet]") {
  namespace layers = troupe::layers;
  troupe::sequential no_flatten({28, 28, 1}, {layers::conv2d(4, 3), layers::dense(10)});
  auto text = no_flatten.description();
  REQUIRE_FALSE(text);
  CHECK_THAT(text.error().message, Catch::Contains("layer 1 ('10')")
                                     && Catch::Contains("put a flatten before it")
                                     && Catch::Contains("26x26x4"));
  troupe::sequential too_wide({28, 28, 1}, {layers::conv2d(4, 29), layers::flatten(),
                                            layers::dense(10)});
  REQUIRE_FALSE(too_wide.description());
  troupe::sequential flat_input(784, {layers::conv2d(4, 3), layers::flatten(),
                                      layers::dense(10)});
  auto flat = flat_input.description();
  REQUIRE_FALSE(flat);
  CHECK_THAT(flat.error().message, Catch::Contains("input shape (height, width, channels)"));
  troupe::sequential swish({28, 28, 1}, {layers::conv2d(4, 3, "swish"), layers::flatten(),
                                         layers::dense(10)});
  auto unknown = swish.description();
  REQUIRE_FALSE(unknown);
  CHECK_THAT(unknown.error().message, Catch::Contains("layer 0 (conv2d 4, 'swish')")
                                        && Catch::Contains("unknown activation"));
}

TEST_CASE("a dense stack with activations beyond relu trains on the CPU as a layered model",
          "[api][convnet]") {
  namespace layers = troupe::layers;
  troupe::sequential model(784, {layers::dense(32, "tanh"), layers::dropout(0.1f),
                                 layers::dense(16, "gelu"), layers::dense(10, "softmax")});
  model.compile();
  auto text = model.description();
  REQUIRE(text);
  CHECK(*text == "1x1x784-32tanh-dropout0.1-16gelu-10");
  auto history = model.fit(slice().train, slice().test, quiet_run().epochs(2));
  REQUIRE(history);
  CHECK(history->val_accuracy > 0.6);
}
