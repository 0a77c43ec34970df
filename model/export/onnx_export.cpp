// Builds the ONNX graph of a dense network with the protobuf classes of
// Debian's libonnx, and writes it serialized.
#include "model/export/onnx_export.hpp"

#include <climits>
#include <initializer_list>
#include <string>

#include <onnx/onnx_pb.h>

#include "model/atomic_write.hpp"
#include "model/parameter_layout.hpp"

namespace troupe {

namespace {

// IR version 8 is what ONNX 1.12 (Debian 12's) writes and checks; opset 13 needs 7 or later.
constexpr int64_t ir_version = 8;

// Declares a float tensor value of shape (batch, width) with a symbolic batch.
void declare_rows(onnx::ValueInfoProto* value, const std::string& name, int width) {
  value->set_name(name);
  auto* tensor = value->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(onnx::TensorProto::FLOAT);
  auto* shape = tensor->mutable_shape();
  shape->add_dim()->set_dim_param("batch");
  shape->add_dim()->set_dim_value(width);
}

// Adds a float initializer of shape `dims` holding the floats at `values`.
void add_initializer(onnx::GraphProto& graph, const std::string& name,
                     std::initializer_list<int64_t> dims, const float* values) {
  auto* tensor = graph.add_initializer();
  tensor->set_name(name);
  tensor->set_data_type(onnx::TensorProto::FLOAT);
  int64_t count = 1;
  for (int64_t dim : dims) {
    tensor->add_dims(dim);
    count *= dim;
  }
  tensor->mutable_float_data()->Add(values, values + count);
}

onnx::NodeProto* add_node(onnx::GraphProto& graph, const std::string& op,
                          const std::string& name,
                          std::initializer_list<std::string> inputs,
                          const std::string& output) {
  auto* node = graph.add_node();
  node->set_op_type(op);
  node->set_name(name);
  for (const auto& input : inputs)
    node->add_input(input);
  node->add_output(output);
  return node;
}

void set_int_attribute(onnx::NodeProto* node, const std::string& name, int64_t value) {
  auto* attribute = node->add_attribute();
  attribute->set_name(name);
  attribute->set_type(onnx::AttributeProto::INT);
  attribute->set_i(value);
}

// input -> [Gemm (-> Relu)] per layer -> logits -> Softmax -> probabilities;
// a squared-error model's last Gemm gives its values, "outputs".
void build_graph(onnx::GraphProto& graph, const model_spec& spec, const float* params) {
  const parameter_layout layout(spec);
  graph.set_name("troupe_mlp");
  graph.set_doc_string("Troupe model " + to_string(spec));
  declare_rows(graph.add_input(), "input", spec.inputs);
  std::string x = "input";
  for (size_t l = 0; l < layout.layers().size(); ++l) {
    const auto& view = layout.layers()[l];
    const std::string layer = "dense_" + std::to_string(l);
    const bool last = l + 1 == layout.layers().size();
    add_initializer(graph, layer + ".weights", {view.in, view.out},
                    params + view.weights_offset);
    add_initializer(graph, layer + ".bias", {view.out}, params + view.bias_offset);
    // y = x W + b: (batch, in) (in, out) + (out); Gemm's defaults, spelled out.
    const bool values = spec.loss == loss_kind::squared_error;
    const std::string y = last ? (values ? "outputs" : "logits") : layer;
    auto* gemm = add_node(graph, "Gemm", layer, {x, layer + ".weights", layer + ".bias"}, y);
    set_int_attribute(gemm, "transA", 0);
    set_int_attribute(gemm, "transB", 0);
    x = y;
    if (spec.layers[l].act == activation::relu) {
      x = layer + "_relu";
      add_node(graph, "Relu", layer + "_relu", {y}, x);
    }
  }
  if (spec.loss == loss_kind::squared_error) {
    declare_rows(graph.add_output(), "outputs", spec.classes());
    return;
  }
  auto* softmax = add_node(graph, "Softmax", "softmax", {x}, "probabilities");
  set_int_attribute(softmax, "axis", 1);
  declare_rows(graph.add_output(), "logits", spec.classes());
  declare_rows(graph.add_output(), "probabilities", spec.classes());
}

} // namespace

status export_onnx(const std::string& path, const model_spec& spec, const float* params) {
  if (spec.inputs < 1 || spec.layers.empty() || params == nullptr)
    return fail(model_errc::invalid_argument,
                path + ": cannot export an ONNX model without inputs, layers or parameters");
  if (spec.layers.back().act != activation::none)
    return fail(model_errc::invalid_argument,
                path + ": cannot export " + to_string(spec) + ": its last layer must give logits");
  onnx::ModelProto model;
  model.set_ir_version(ir_version);
  model.set_producer_name("troupe");
  model.set_model_version(1);
  model.set_doc_string("Troupe model " + to_string(spec)
                       + (spec.loss == loss_kind::squared_error ? ", mean squared error"
                                                                : ", softmax cross-entropy"));
  auto* opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(onnx_opset);
  build_graph(*model.mutable_graph(), spec, params);
  if (model.ByteSizeLong() > static_cast<size_t>(INT_MAX))
    return fail(model_errc::io_error,
                path + ": the model is larger than the 2 GiB one ONNX protobuf can hold");
  std::string bytes;
  if (!model.SerializeToString(&bytes))
    return fail(model_errc::io_error, path + ": cannot serialize the ONNX model");
  return write_file_atomically(path, bytes);
}

} // namespace troupe
