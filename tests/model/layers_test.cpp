// The layers of a layered model: its text (one spelling, the parameter
// count, refusals that name the layer and the shapes) and dropout keyed by
// sample and step (tests/api/layers_test.cpp checks every layer's gradient).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "model/layers/layer_ops.hpp"
#include "model/layers/layer_spec.hpp"
#include "model/layers/layered_model.hpp"

using namespace troupe;

TEST_CASE("the keras convnet has its 34,826 parameters and one spelling",
          "[layers][spec]") {
  auto spec = parse_stack_spec(
    "28x28x1-conv32k3relu-maxpool2-conv64k3relu-maxpool2-flatten-dropout0.50-10");
  REQUIRE(spec);
  CHECK(to_string(*spec) ==
        "28x28x1-conv32k3relu-maxpool2-conv64k3relu-maxpool2-flatten-dropout0.5-10");
  auto model = make_layered_model(to_string(*spec));
  REQUIRE(model);
  CHECK((*model)->parameter_count() == 34826);
  CHECK((*model)->inputs() == 784);
  CHECK((*model)->outputs() == 10);
  for (const std::string text : {"28x28x1-conv2k3s2sigmoid-avgpool2-gelu-globalavgpool-10",
                                 "28x28x1-conv4k5tanh-maxpool2-flatten-16leaky_relu-elu-10",
                                 "1x1x64-32gelu-dropout0.25-layernorm-10",
                                 "28x28x1-conv2k3s2samerelu-conv4k5same-flatten-10"}) {
    auto each = parse_stack_spec(text);
    REQUIRE(each);
    CHECK(to_string(*each) == text);
  }
  auto same = parse_stack_spec("28x28x1-conv2k3s2samerelu-conv4k30same-flatten-10");
  REQUIRE(same); // a kernel larger than its input is fine with same padding
  auto same_model = make_layered_model(to_string(*same));
  REQUIRE(same_model);
  CHECK((*same_model)->parameter_count() == (9 * 2 + 2) + (900 * 2 * 4 + 4) + (14 * 14 * 4 * 10 + 10));
  CHECK(names_layered_model("28x28x1-10"));
  CHECK_FALSE(names_layered_model("784-128relu-10"));
}

TEST_CASE("a stack that does not fit is refused naming the layer and the shapes",
          "[layers][spec]") {
  const std::vector<std::pair<std::string, std::string>> refused{
    {"28x28x1-conv8k30relu-flatten-10", "layer 0 ('conv8k30relu'): the kernel 30x30 is larger than its input (input 28x28x1)"},
    {"28x28x1-conv8k3-10", "layer 1 ('10'): a dense layer needs a flat input: put a flatten before it (input 26x26x8)"},
    {"28x28x1-flatten-conv8k3-10", "a conv2d needs a spatial input"},
    {"28x28x1-maxpool0-flatten-10", "layer 0 ('maxpool0') is not"},
    {"28x28x1-flatten-dropout1-10", "the dropout rate 1.000000 is outside [0, 1)"},
    {"28x28x1-flatten-pool2-10", "layer 1 ('pool2') is not"},
    {"28x28x1-flatten-10relu", "the last layer must be a dense layer without an activation"},
    {"28x28-flatten-10", "the input '28x28' is not HxWxC"},
  };
  for (const auto& [text, why] : refused) {
    INFO(text);
    auto spec = parse_stack_spec(text);
    REQUIRE_FALSE(spec);
    CHECK_THAT(spec.error().message, Catch::Contains(why));
  }
}

TEST_CASE("dropout draws by seed, step and sample index, not by the sample's row",
          "[layers][dropout]") {
  auto op = make_dropout(tensor_shape{1, 1, 1000}, 0.25f);
  std::vector<float> x(2000, 1.0f), a(2000), b(2000);
  const uint32_t forward_order[2] = {7, 9};
  const uint32_t backward_order[2] = {9, 7};
  op->forward(nullptr, x.data(), a.data(), 2, pass_keys{42, 3, forward_order, true});
  op->forward(nullptr, x.data(), b.data(), 2, pass_keys{42, 3, backward_order, true});
  // Sample 7 is row 0 of the first pass and row 1 of the second: the same mask.
  CHECK(std::equal(a.begin(), a.begin() + 1000, b.begin() + 1000));
  size_t dropped = 0;
  for (size_t i = 0; i < 1000; ++i) {
    CHECK((a[i] == 0.0f || a[i] == 1.0f / 0.75f));
    dropped += a[i] == 0.0f ? 1 : 0;
  }
  CHECK(dropped > 200);
  CHECK(dropped < 300);
  std::vector<float> c(2000);
  op->forward(nullptr, x.data(), c.data(), 2, pass_keys{42, 4, forward_order, true});
  CHECK_FALSE(std::equal(a.begin(), a.end(), c.begin())); // another step, another mask
  op->forward(nullptr, x.data(), c.data(), 2, pass_keys{42, 3, forward_order, false});
  CHECK(c == x); // evaluation: the identity
  std::vector<float> dy(2000, 2.0f), dx(2000);
  op->forward(nullptr, x.data(), a.data(), 2, pass_keys{42, 3, forward_order, true});
  op->backward(nullptr, x.data(), a.data(), dy.data(), dx.data(), nullptr, 2,
               pass_keys{42, 3, forward_order, true});
  for (size_t i = 0; i < 2000; ++i)
    CHECK(dx[i] == (a[i] == 0.0f ? 0.0f : 2.0f / 0.75f));
}
