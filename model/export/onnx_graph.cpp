// The ONNX graph's pieces with the protobuf classes of Debian's libonnx, and
// the model serialized and written.
#include "model/export/onnx_graph.hpp"

#include <climits>

#include <onnx/onnx_pb.h>

#include "model/atomic_write.hpp"
#include "model/export/onnx_export.hpp"

namespace troupe::detail::onnx_graph {

namespace {

// IR version 8 is what ONNX 1.12 (Debian 12's) writes and checks; opset 13 needs 7 or later.
constexpr int64_t ir_version = 8;

} // namespace

void declare_rows(onnx::ValueInfoProto* value, const std::string& name, int width) {
  value->set_name(name);
  auto* tensor = value->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(onnx::TensorProto::FLOAT);
  auto* shape = tensor->mutable_shape();
  shape->add_dim()->set_dim_param("batch");
  shape->add_dim()->set_dim_value(width);
}

void add_initializer(onnx::GraphProto& graph, const std::string& name,
                     const std::vector<int64_t>& dims, const float* values) {
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

void add_int64_initializer(onnx::GraphProto& graph, const std::string& name,
                           const std::vector<int64_t>& values) {
  auto* tensor = graph.add_initializer();
  tensor->set_name(name);
  tensor->set_data_type(onnx::TensorProto::INT64);
  tensor->add_dims(static_cast<int64_t>(values.size()));
  tensor->mutable_int64_data()->Add(values.begin(), values.end());
}

onnx::NodeProto* add_node(onnx::GraphProto& graph, const std::string& op,
                          const std::string& name, std::initializer_list<std::string> inputs,
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

void set_ints_attribute(onnx::NodeProto* node, const std::string& name,
                        const std::vector<int64_t>& values) {
  auto* attribute = node->add_attribute();
  attribute->set_name(name);
  attribute->set_type(onnx::AttributeProto::INTS);
  for (int64_t value : values)
    attribute->add_ints(value);
}

void set_float_attribute(onnx::NodeProto* node, const std::string& name, float value) {
  auto* attribute = node->add_attribute();
  attribute->set_name(name);
  attribute->set_type(onnx::AttributeProto::FLOAT);
  attribute->set_f(value);
}

status write_model(const std::string& path, const std::string& doc,
                   const std::function<void(onnx::GraphProto&)>& build) {
  onnx::ModelProto model;
  model.set_ir_version(ir_version);
  model.set_producer_name("troupe");
  model.set_model_version(1);
  model.set_doc_string(doc);
  auto* opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(onnx_opset);
  build(*model.mutable_graph());
  if (model.ByteSizeLong() > static_cast<size_t>(INT_MAX))
    return fail(errc::io,
                path + ": the model is larger than the 2 GiB one ONNX protobuf can hold");
  std::string bytes;
  if (!model.SerializeToString(&bytes))
    return fail(errc::io, path + ": cannot serialize the ONNX model");
  return write_file_atomically(path, bytes);
}

} // namespace troupe::detail::onnx_graph
