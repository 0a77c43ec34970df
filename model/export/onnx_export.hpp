// Export of a trained MLP or layered model (a convolutional network) as a
// standard ONNX model, for serving it with any ONNX runtime.
#pragma once

#include <string>

#include "common/expected.hpp"
#include "model/layers/layer_spec.hpp"
#include "model/model_spec.hpp"

namespace troupe::detail {

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

/// Writes the layered model `spec` with parameters `params` (each layer's in
/// order, as layered_model keeps them) to `path` as an ONNX model, as the
/// dense network's: input "input" (N, H*W*C), Reshape to (N, H, W, C),
/// Transpose to NCHW, then per layer Conv (kernels (filters, C, K, K)),
/// MaxPool, AveragePool, GlobalAveragePool, layer normalization as
/// ReduceMean, Sub, Mul, Add, Sqrt and Div over the channels, Transpose back
/// to NHWC and Flatten, Gemm, and the activations (Relu, Tanh, Sigmoid,
/// LeakyRelu, Elu, gelu as 0.5 x (1 + Erf(x / sqrt 2))); dropout is the
/// identity. Outputs "logits" and "probabilities". A layer of one's own
/// ("@name") has no ONNX form: invalid_argument naming it.
status export_onnx(const std::string& path, const stack_spec& spec, const float* params);

} // namespace troupe::detail
