// The text that describes a layered model (a convolutional network), the
// model's identity on the wire and in checkpoints:
//   28x28x1-conv32k3relu-maxpool2-conv64k3relu-maxpool2-flatten-dropout0.5-10
// The input shape HxWxC, then one token per layer: convFkK[sS][same][ACT]
// (F filters of K x K, stride S, valid padding unless same), maxpoolP and avgpoolP (P x P,
// stride P), globalavgpool, flatten, dropoutR (rate R in [0, 1)), layernorm, batchnorm, an
// activation alone (ACT: relu, tanh, sigmoid, leaky_relu, elu, gelu), and
// dense layers as in the MLP's text, UNITS[ACT]; the last is a dense layer
// without an activation, whose outputs are the logits of a softmax
// cross-entropy. A registered layer of one's own is @NAME or
// @NAME(SETTINGS); a '-' inside the parentheses does not end the token.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/expected.hpp"
#include "model/layers/activations.hpp"
#include "model/layers/layer.hpp"

namespace troupe::detail {

/// Names a layer's kind.
enum class layer_kind {
  conv2d,
  max_pool2d,
  average_pool2d,
  global_average_pool2d,
  flatten,
  dropout,
  activation,
  layer_normalization,
  batch_normalization,
  dense,
  custom // a registered layer of one's own
};

/// Describes one layer of the stack.
struct layer_spec {
  layer_kind kind = layer_kind::dense;
  int units = 0;      // dense: outputs; conv2d: filters
  int kernel = 0;     // conv2d: K; max_pool2d, average_pool2d: P
  int stride = 1;     // conv2d
  bool same = false;  // conv2d: same padding rather than valid
  activation_kind act = activation_kind::none; // conv2d, dense, activation
  float rate = 0.0f;  // dropout
  std::string name;     // custom: the registered name
  std::string settings; // custom: the text in its parentheses
};

/// Describes a layered model: the input shape and the layers.
struct stack_spec {
  tensor_shape input;
  std::vector<layer_spec> layers;
};

/// Tells whether `text` describes a layered model (its input is a shape
/// HxWxC) rather than the MLP ("784-128relu-10").
bool names_layered_model(const std::string& text);

/// Parses the text; an error names the token (index and text) and the
/// shapes that do not fit.
expected<stack_spec> parse_stack_spec(const std::string& text);

/// Formats a spec in the text parse_stack_spec reads (its one spelling).
std::string to_string(const stack_spec& spec);

/// Builds each layer's op, in order; the shapes were checked by the parse,
/// and a registered layer's factory may still fail.
expected<std::vector<std::unique_ptr<layer_op>>> make_layer_ops(const stack_spec& spec);

} // namespace troupe::detail
