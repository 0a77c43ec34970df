// The pieces an exported ONNX graph is made of, shared by the dense
// network's export and the layered model's: values, initializers, nodes and
// their attributes, and the model written out around a graph.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

#include "common/expected.hpp"

namespace onnx {
class GraphProto;
class NodeProto;
class ValueInfoProto;
} // namespace onnx

namespace troupe::detail::onnx_graph {

/// Declares a float tensor value of shape (batch, width) with a symbolic batch.
void declare_rows(onnx::ValueInfoProto* value, const std::string& name, int width);

/// Adds a float initializer of shape `dims` (none: a scalar) holding the
/// floats at `values`.
void add_initializer(onnx::GraphProto& graph, const std::string& name,
                     const std::vector<int64_t>& dims, const float* values);

/// Adds a one-dimensional int64 initializer holding `values`.
void add_int64_initializer(onnx::GraphProto& graph, const std::string& name,
                           const std::vector<int64_t>& values);

/// Appends a node of operator `op` from `inputs` to `output`.
onnx::NodeProto* add_node(onnx::GraphProto& graph, const std::string& op,
                          const std::string& name, std::initializer_list<std::string> inputs,
                          const std::string& output);

/// Sets an attribute of a node: one int, a list of ints, or one float.
void set_int_attribute(onnx::NodeProto* node, const std::string& name, int64_t value);
void set_ints_attribute(onnx::NodeProto* node, const std::string& name,
                        const std::vector<int64_t>& values);
void set_float_attribute(onnx::NodeProto* node, const std::string& name, float value);

/// Writes to `path`, atomically, an ONNX model (IR version 8, opset
/// onnx_opset, producer "troupe") described by `doc` whose graph `build`
/// fills. A model too big for one protobuf or a failed write is io_error.
status write_model(const std::string& path, const std::string& doc,
                   const std::function<void(onnx::GraphProto&)>& build);

} // namespace troupe::detail::onnx_graph
