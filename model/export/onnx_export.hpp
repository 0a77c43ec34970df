// Export of a trained MLP as a standard ONNX model, for serving it with any
// ONNX runtime.
#pragma once

#include <string>

#include "common/expected.hpp"
#include "model/model_spec.hpp"

namespace troupe {

/// Names the ONNX operator set the exported graph uses.
inline constexpr int onnx_opset = 13;

/// Writes the network `spec` with parameters `params` (parameter_layout(spec)
/// floats) to `path` as an ONNX model (IR version 8, opset 13), atomically.
/// The graph: input "input" float (N, spec.inputs) with a symbolic batch N;
/// per dense layer a Gemm with its weights (in, out) and bias (out) as
/// initializers, then Relu where the spec says; outputs "logits"
/// (N, classes) and "probabilities" (Softmax over axis 1). An empty spec or
/// null params is invalid_argument; a model too big for one protobuf or a
/// failed write is io_error.
status export_onnx(const std::string& path, const model_spec& spec, const float* params);

} // namespace troupe
