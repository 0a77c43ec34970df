// Builds the ONNX graph of a layered model (a convolutional network): the
// channels-last rows turned to NCHW for the convolutions and pools, back to
// channels last before a flatten, so every value keeps Troupe's order.
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "model/export/onnx_export.hpp"
#include "model/export/onnx_graph.hpp"
#include "model/layers/activation_math.hpp"
#include "model/layers/layer_ops.hpp"

namespace troupe::detail {

namespace {

using namespace onnx_graph;

constexpr float layer_norm_epsilon = 1e-3f; // as model/layers/normalization.cpp
constexpr float batch_norm_epsilon = 1e-3f; // as model/layers/batch_normalization.cpp
using activation_math::leaky_slope;

// Emits a stack's nodes in order; x_ names the value the next layer reads.
class layered_graph {
public:
  layered_graph(onnx::GraphProto& graph, const float* params) : graph_(graph), params_(params) {}

  void build(const stack_spec& spec, const std::vector<std::unique_ptr<layer_op>>& ops);

private:
  void input(tensor_shape shape);
  void layer(const layer_spec& l, tensor_shape in, const float* params);
  void conv(const layer_spec& l, tensor_shape in, const float* params);
  void pool(const char* op, int size);
  void layer_normalization(tensor_shape in, const float* params);
  void batch_normalization(tensor_shape in, const float* params);
  void dense(const layer_spec& l, tensor_shape in, const float* params);
  void activation(activation_kind act);
  void gelu();
  void to_rows();

  // Appends `op` on `inputs` as this layer's next node; returns it (its
  // output is its name).
  onnx::NodeProto* node(const std::string& op, std::initializer_list<std::string> inputs);
  std::string out(const onnx::NodeProto* n) const { return n->output(0); }
  // Names a float scalar initializer, added on first use.
  std::string scalar(const std::string& name, float value);

  onnx::GraphProto& graph_;
  const float* params_;
  std::string x_ = "input";
  bool spatial_ = false;  // x_ is (N, C, H, W); otherwise flat rows (N, values)
  std::string prefix_;    // the layer's, for its nodes' and initializers' names
  bool last_ = false;     // the layer is the last: its Gemm gives "logits"
  int nodes_in_layer_ = 0;
  std::vector<std::string> scalars_;
};

onnx::NodeProto* layered_graph::node(const std::string& op,
                                     std::initializer_list<std::string> inputs) {
  const std::string name = prefix_ + "/" + op + "_" + std::to_string(nodes_in_layer_++);
  return add_node(graph_, op, name, inputs, name);
}

std::string layered_graph::scalar(const std::string& name, float value) {
  for (const auto& known : scalars_)
    if (known == name)
      return name;
  add_initializer(graph_, name, {}, &value);
  scalars_.push_back(name);
  return name;
}

// (N, H*W*C) -> Reshape (N, H, W, C) -> Transpose (N, C, H, W).
void layered_graph::input(tensor_shape shape) {
  prefix_ = "input";
  add_int64_initializer(graph_, "input.shape", {-1, shape.height, shape.width, shape.channels});
  x_ = out(node("Reshape", {x_, "input.shape"}));
  auto* transpose = node("Transpose", {x_});
  set_ints_attribute(transpose, "perm", {0, 3, 1, 2});
  x_ = out(transpose);
  spatial_ = true;
}

// (N, C, H, W) -> Transpose (N, H, W, C) -> Flatten (N, H*W*C): Troupe's order.
void layered_graph::to_rows() {
  if (!spatial_)
    return;
  auto* transpose = node("Transpose", {x_});
  set_ints_attribute(transpose, "perm", {0, 2, 3, 1});
  auto* flatten = node("Flatten", {out(transpose)});
  set_int_attribute(flatten, "axis", 1);
  x_ = out(flatten);
  spatial_ = false;
}

void layered_graph::build(const stack_spec& spec,
                          const std::vector<std::unique_ptr<layer_op>>& ops) {
  graph_.set_name("troupe_layered");
  graph_.set_doc_string("Troupe model " + to_string(spec));
  declare_rows(graph_.add_input(), "input", static_cast<int>(spec.input.size()));
  input(spec.input);
  tensor_shape shape = spec.input;
  const float* params = params_;
  for (size_t i = 0; i < ops.size(); ++i) {
    prefix_ = "layer" + std::to_string(i);
    nodes_in_layer_ = 0;
    last_ = i + 1 == ops.size();
    layer(spec.layers[i], shape, params);
    params += ops[i]->parameter_count();
    shape = ops[i]->output_shape();
  }
  auto* softmax = add_node(graph_, "Softmax", "softmax", {x_}, "probabilities");
  set_int_attribute(softmax, "axis", 1);
  const int classes = spec.layers.back().units;
  declare_rows(graph_.add_output(), "logits", classes);
  declare_rows(graph_.add_output(), "probabilities", classes);
}

void layered_graph::layer(const layer_spec& l, tensor_shape in, const float* params) {
  switch (l.kind) {
  case layer_kind::conv2d:
    return conv(l, in, params);
  case layer_kind::max_pool2d:
    return pool("MaxPool", l.kernel);
  case layer_kind::average_pool2d:
    return pool("AveragePool", l.kernel);
  case layer_kind::global_average_pool2d:
    x_ = out(node("GlobalAveragePool", {x_}));
    return;
  case layer_kind::flatten:
    return to_rows();
  case layer_kind::dropout: // the identity outside training
  case layer_kind::custom:  // refused before the graph is built
    return;
  case layer_kind::activation:
    return activation(l.act);
  case layer_kind::layer_normalization:
    return layer_normalization(in, params);
  case layer_kind::batch_normalization:
    return batch_normalization(in, params);
  case layer_kind::dense:
    return dense(l, in, params);
  }
}

// Troupe's kernel (K, K, C, F) becomes ONNX's (F, C, K, K); same padding as
// explicit pads, the smaller half before.
void layered_graph::conv(const layer_spec& l, tensor_shape in, const float* params) {
  const int k = l.kernel, channels = in.channels, filters = l.units;
  std::vector<float> kernel(static_cast<size_t>(k) * k * channels * filters);
  for (int f = 0; f < filters; ++f)
    for (int c = 0; c < channels; ++c)
      for (int ky = 0; ky < k; ++ky)
        for (int kx = 0; kx < k; ++kx)
          kernel[((static_cast<size_t>(f) * channels + c) * k + ky) * k + kx] =
            params[((static_cast<size_t>(ky) * k + kx) * channels + c) * filters + f];
  add_initializer(graph_, prefix_ + ".kernel", {filters, channels, k, k}, kernel.data());
  add_initializer(graph_, prefix_ + ".bias", {filters}, params + kernel.size());
  auto* conv = node("Conv", {x_, prefix_ + ".kernel", prefix_ + ".bias"});
  set_ints_attribute(conv, "kernel_shape", {k, k});
  set_ints_attribute(conv, "strides", {l.stride, l.stride});
  if (l.same) {
    auto total = [&](int side) {
      const int out = conv2d_output_side(side, k, l.stride, true);
      return std::max((out - 1) * l.stride + k - side, 0);
    };
    const int rows = total(in.height), columns = total(in.width);
    set_ints_attribute(conv, "pads", {rows / 2, columns / 2, rows - rows / 2,
                                      columns - columns / 2});
  }
  x_ = out(conv);
  activation(l.act);
}

// P x P windows, stride P, no padding: the remainder rows and columns dropped.
void layered_graph::pool(const char* op, int size) {
  auto* pool = node(op, {x_});
  set_ints_attribute(pool, "kernel_shape", {size, size});
  set_ints_attribute(pool, "strides", {size, size});
  x_ = out(pool);
}

// y = (x - mean) / sqrt(variance + epsilon) * gamma + beta over axis 1, the
// channels of (N, C, H, W) as of flat rows; gamma and beta broadcast along it.
void layered_graph::layer_normalization(tensor_shape in, const float* params) {
  const int64_t channels = in.channels;
  const std::vector<int64_t> dims =
    spatial_ ? std::vector<int64_t>{channels, 1, 1} : std::vector<int64_t>{channels};
  add_initializer(graph_, prefix_ + ".gamma", dims, params);
  add_initializer(graph_, prefix_ + ".beta", dims, params + channels);
  const auto mean_of = [&](const std::string& value) {
    auto* mean = node("ReduceMean", {value});
    set_ints_attribute(mean, "axes", {1});
    set_int_attribute(mean, "keepdims", 1);
    return out(mean);
  };
  const std::string centered = out(node("Sub", {x_, mean_of(x_)}));
  const std::string variance = mean_of(out(node("Mul", {centered, centered})));
  const std::string shifted =
    out(node("Add", {variance, scalar("layer_norm.epsilon", layer_norm_epsilon)}));
  const std::string normalized = out(node("Div", {centered, out(node("Sqrt", {shifted}))}));
  const std::string scaled = out(node("Mul", {normalized, prefix_ + ".gamma"}));
  x_ = out(node("Add", {scaled, prefix_ + ".beta"}));
}

// Inference's batch normalization, by the moving statistics, over axis 1:
// the channels of (N, C, H, W) as of flat rows (N, C).
void layered_graph::batch_normalization(tensor_shape in, const float* params) {
  const int64_t channels = in.channels;
  const char* names[] = {".gamma", ".beta", ".moving_mean", ".moving_variance"};
  for (int i = 0; i < 4; ++i)
    add_initializer(graph_, prefix_ + names[i], {channels}, params + i * channels);
  auto* norm = node("BatchNormalization", {x_, prefix_ + ".gamma", prefix_ + ".beta",
                                           prefix_ + ".moving_mean", prefix_ + ".moving_variance"});
  set_float_attribute(norm, "epsilon", batch_norm_epsilon);
  x_ = out(norm);
}

// y = x W + b: (N, in) (in, units) + (units); the last layer's are the logits.
void layered_graph::dense(const layer_spec& l, tensor_shape in, const float* params) {
  to_rows();
  const int64_t inputs = static_cast<int64_t>(in.size());
  add_initializer(graph_, prefix_ + ".kernel", {inputs, l.units}, params);
  add_initializer(graph_, prefix_ + ".bias", {l.units}, params + inputs * l.units);
  auto* gemm = node("Gemm", {x_, prefix_ + ".kernel", prefix_ + ".bias"});
  set_int_attribute(gemm, "transA", 0);
  set_int_attribute(gemm, "transB", 0);
  if (last_)
    gemm->set_output(0, "logits");
  x_ = out(gemm);
  activation(l.act);
}

void layered_graph::activation(activation_kind act) {
  onnx::NodeProto* made = nullptr;
  switch (act) {
  case activation_kind::none:
    return;
  case activation_kind::relu:
    made = node("Relu", {x_});
    break;
  case activation_kind::tanh:
    made = node("Tanh", {x_});
    break;
  case activation_kind::sigmoid:
    made = node("Sigmoid", {x_});
    break;
  case activation_kind::leaky_relu:
    made = node("LeakyRelu", {x_});
    set_float_attribute(made, "alpha", leaky_slope);
    break;
  case activation_kind::elu:
    made = node("Elu", {x_});
    set_float_attribute(made, "alpha", 1.0f);
    break;
  case activation_kind::gelu:
    return gelu();
  }
  x_ = out(made);
}

// gelu(x) = 0.5 x (1 + erf(x / sqrt 2)), the exact form, in elementwise nodes.
void layered_graph::gelu() {
  const std::string scaled =
    out(node("Div", {x_, scalar("gelu.sqrt2", static_cast<float>(std::sqrt(2.0)))}));
  const std::string cdf = out(node("Add", {out(node("Erf", {scaled})), scalar("one", 1.0f)}));
  x_ = out(node("Mul", {out(node("Mul", {x_, cdf})), scalar("half", 0.5f)}));
}

} // namespace

status export_onnx(const std::string& path, const stack_spec& spec, const float* params) {
  if (spec.layers.empty() || params == nullptr)
    return fail(errc::invalid_argument,
                path + ": cannot export an ONNX model without layers or parameters");
  for (size_t i = 0; i < spec.layers.size(); ++i)
    if (spec.layers[i].kind == layer_kind::custom)
      return fail(errc::invalid_argument,
                  path + ": cannot export " + to_string(spec) + " to ONNX: layer "
                    + std::to_string(i) + " ('@" + spec.layers[i].name
                    + "') is a layer of one's own, which has no ONNX form");
  const layer_spec& last = spec.layers.back();
  if (last.kind != layer_kind::dense || last.act != activation_kind::none)
    return fail(errc::invalid_argument,
                path + ": cannot export " + to_string(spec) + ": its last layer must give logits");
  auto ops = make_layer_ops(spec);
  if (!ops)
    return ops.error();
  const std::string doc = "Troupe model " + to_string(spec) + ", softmax cross-entropy";
  return onnx_graph::write_model(path, doc, [&](onnx::GraphProto& graph) {
    layered_graph(graph, params).build(spec, *ops);
  });
}

} // namespace troupe::detail
