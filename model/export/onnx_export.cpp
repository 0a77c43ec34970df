// Builds the ONNX graph of a dense network (model/export/onnx_graph.hpp)
// and writes it serialized.
#include "model/export/onnx_export.hpp"

#include <string>

#include <onnx/onnx_pb.h>

#include "model/export/onnx_graph.hpp"
#include "model/parameter_layout.hpp"

namespace troupe::detail {

namespace {

using namespace onnx_graph;

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
    return fail(errc::invalid_argument,
                path + ": cannot export an ONNX model without inputs, layers or parameters");
  if (spec.layers.back().act != activation::none)
    return fail(errc::invalid_argument,
                path + ": cannot export " + to_string(spec) + ": its last layer must give logits");
  const std::string doc = "Troupe model " + to_string(spec)
                          + (spec.loss == loss_kind::squared_error ? ", mean squared error"
                                                                   : ", softmax cross-entropy");
  return write_model(path, doc, [&](onnx::GraphProto& graph) {
    build_graph(graph, spec, params);
  });
}

} // namespace troupe::detail
