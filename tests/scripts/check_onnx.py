#!/usr/bin/python3
"""Checks an ONNX model that Troupe exported against Troupe's own logits.

    check_onnx.py MODEL.onnx FEATURES.npy LOGITS.npy [--atol A]

Runs onnx.checker (full check, with shape inference), checks the interface
(one input "input" of shape (batch, features) with a symbolic batch, outputs
"logits" and "probabilities"), then evaluates the graph independently of any
ONNX runtime: numpy in float64, node by node, for the ops an MLP uses (Gemm,
MatMul, Add, Relu, Softmax) and those of a layered model (Reshape, Transpose,
Conv, MaxPool, AveragePool, GlobalAveragePool, Flatten, Tanh, Sigmoid,
LeakyRelu, Elu, Erf, Mul, Div, Sub, Sqrt, ReduceMean, BatchNormalization;
convolutions and pools
without padding, dilation or groups). The logits must have Troupe's argmax on every row
and lie within A (1e-5) of Troupe's; every row of probabilities must sum to 1.
Prints the figures; exits 1 on a failed check, 2 when onnx or numpy is missing
(python3-onnx, python3-numpy).
"""
import argparse
import math
import sys

try:
    import numpy as np
    import onnx
    from onnx import numpy_helper
except ImportError as missing:
    print(f"FAIL: {missing}: install python3-onnx and python3-numpy", file=sys.stderr)
    sys.exit(2)

PROBABILITY_SUM_TOLERANCE = 1e-6


def fail(message):
    print(f"FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def attributes(node):
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


def gemm(inputs, attrs):
    a, b = inputs[0], inputs[1]
    if attrs.get("transA", 0):
        a = a.T
    if attrs.get("transB", 0):
        b = b.T
    y = attrs.get("alpha", 1.0) * (a @ b)
    if len(inputs) > 2 and inputs[2] is not None:
        y = y + attrs.get("beta", 1.0) * inputs[2]
    return y


def softmax(inputs, attrs):
    x = inputs[0]
    axis = attrs.get("axis", -1)
    shifted = np.exp(x - x.max(axis=axis, keepdims=True))
    return shifted / shifted.sum(axis=axis, keepdims=True)


def require_plain_window(attrs, op, pads_allowed=False):
    """Fails on what the windows below do not model: padding (but a Conv's
    explicit pads), dilation, groups."""
    if attrs.get("auto_pad", b"NOTSET") not in (b"NOTSET", "NOTSET", b"VALID", "VALID"):
        fail(f"{op}: auto_pad {attrs['auto_pad']!r} is not evaluated here")
    if (any(attrs.get("pads", [])) and not pads_allowed) or any(
            d != 1 for d in attrs.get("dilations", [])):
        fail(f"{op}: pads or dilations are not evaluated here")
    if attrs.get("group", 1) != 1 or attrs.get("ceil_mode", 0) != 0:
        fail(f"{op}: groups or ceil_mode are not evaluated here")


def windows(x, kernel, strides):
    """Yields (ky, kx, x at that tap of every window): x (N, C, H, W)."""
    (kh, kw), (sh, sw) = kernel, strides
    out_h, out_w = (x.shape[2] - kh) // sh + 1, (x.shape[3] - kw) // sw + 1
    for ky in range(kh):
        for kx in range(kw):
            yield ky, kx, x[:, :, ky:ky + sh * (out_h - 1) + 1:sh, kx:kx + sw * (out_w - 1) + 1:sw]


def conv(inputs, attrs):
    require_plain_window(attrs, "Conv", pads_allowed=True)
    x, w = inputs[0], inputs[1]
    top, left, bottom, right = attrs.get("pads", [0, 0, 0, 0])
    x = np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)))
    kernel = attrs.get("kernel_shape", list(w.shape[2:]))
    y = sum(np.einsum("nchw,fc->nfhw", tap, w[:, :, ky, kx])
            for ky, kx, tap in windows(x, kernel, attrs.get("strides", [1, 1])))
    if len(inputs) > 2 and inputs[2] is not None:
        y = y + inputs[2][None, :, None, None]
    return y


def pool(reduce):
    def run(inputs, attrs):
        require_plain_window(attrs, "pool")
        kernel = attrs["kernel_shape"]
        taps = [tap for _, _, tap in windows(inputs[0], kernel, attrs.get("strides", [1, 1]))]
        return reduce(np.stack(taps), axis=0)
    return run


def reshape(inputs, attrs):
    x, shape = inputs[0], [int(d) for d in inputs[1]]
    shape = [x.shape[i] if d == 0 else d for i, d in enumerate(shape)]
    return x.reshape(shape)


def flatten(inputs, attrs):
    x, axis = inputs[0], attrs.get("axis", 1)
    return x.reshape(int(np.prod(x.shape[:axis])), -1)


def reduce_mean(inputs, attrs):
    axes = attrs.get("axes")
    return inputs[0].mean(axis=None if axes is None else tuple(axes),
                          keepdims=bool(attrs.get("keepdims", 1)))


def batch_normalization(inputs, attrs):
    x, gamma, beta, mean, variance = inputs
    shape = (1, -1) + (1,) * (x.ndim - 2)  # along axis 1
    deviation = np.sqrt(variance + attrs.get("epsilon", 1e-5))
    return ((x - mean.reshape(shape)) / deviation.reshape(shape) * gamma.reshape(shape)
            + beta.reshape(shape))


OPS = {
    "Gemm": gemm,
    "MatMul": lambda inputs, attrs: inputs[0] @ inputs[1],
    "Add": lambda inputs, attrs: inputs[0] + inputs[1],
    "Sub": lambda inputs, attrs: inputs[0] - inputs[1],
    "Mul": lambda inputs, attrs: inputs[0] * inputs[1],
    "Div": lambda inputs, attrs: inputs[0] / inputs[1],
    "Sqrt": lambda inputs, attrs: np.sqrt(inputs[0]),
    "Relu": lambda inputs, attrs: np.maximum(inputs[0], 0.0),
    "Tanh": lambda inputs, attrs: np.tanh(inputs[0]),
    "Sigmoid": lambda inputs, attrs: 1.0 / (1.0 + np.exp(-inputs[0])),
    "LeakyRelu": lambda inputs, attrs: np.where(inputs[0] >= 0, inputs[0],
                                                attrs.get("alpha", 0.01) * inputs[0]),
    "Elu": lambda inputs, attrs: np.where(inputs[0] > 0, inputs[0],
                                          attrs.get("alpha", 1.0) * np.expm1(inputs[0])),
    "Erf": lambda inputs, attrs: np.vectorize(math.erf, otypes=[np.float64])(inputs[0]),
    "Softmax": softmax,
    "Reshape": reshape,
    "Transpose": lambda inputs, attrs: np.transpose(inputs[0], attrs.get("perm")),
    "Flatten": flatten,
    "Conv": conv,
    "MaxPool": pool(np.max),
    "AveragePool": pool(np.mean),
    "GlobalAveragePool": lambda inputs, attrs: inputs[0].mean(axis=(2, 3), keepdims=True),
    "ReduceMean": reduce_mean,
    "BatchNormalization": batch_normalization,
}


def initializer_value(tensor):
    """Floats as float64; integers (a Reshape's shape) as they are."""
    value = numpy_helper.to_array(tensor)
    return value.astype(np.float64) if value.dtype.kind == "f" else value


def evaluate(graph, features):
    """Runs the graph's nodes in order (ONNX lists them topologically)."""
    values = {t.name: initializer_value(t) for t in graph.initializer}
    values["input"] = features.astype(np.float64)
    for node in graph.node:
        if node.domain not in ("", "ai.onnx"):
            fail(f"node {node.name}: domain {node.domain!r} is not the standard one")
        if node.op_type not in OPS:
            fail(f"node {node.name}: op {node.op_type} is not one this check evaluates")
        missing = [name for name in node.input if name and name not in values]
        if missing:
            fail(f"node {node.name} reads {missing}, which nothing before it defines")
        inputs = [values[name] if name else None for name in node.input]
        if len(node.output) != 1:
            fail(f"node {node.name} has {len(node.output)} outputs, expected 1")
        values[node.output[0]] = OPS[node.op_type](inputs, attributes(node))
    return values


def check_interface(model, features):
    graph = model.graph
    opsets = {o.domain: o.version for o in model.opset_import}
    print(f"model: ir_version {model.ir_version}, opset {opsets}, "
          f"producer {model.producer_name!r}, {len(graph.node)} nodes: "
          f"{' '.join(n.op_type for n in graph.node)}")
    initializers = {t.name for t in graph.initializer}
    inputs = [i for i in graph.input if i.name not in initializers]
    if [i.name for i in inputs] != ["input"]:
        fail(f"graph inputs are {[i.name for i in inputs]}, expected ['input']")
    dims = inputs[0].type.tensor_type.shape.dim
    if len(dims) != 2 or not dims[0].dim_param or dims[0].HasField("dim_value"):
        fail("input is not (batch, features) with a symbolic batch dimension")
    if dims[1].dim_value != features.shape[1]:
        fail(f"input has {dims[1].dim_value} features, the data {features.shape[1]}")
    outputs = [o.name for o in graph.output]
    if outputs != ["logits", "probabilities"]:
        fail(f"graph outputs are {outputs}, expected ['logits', 'probabilities']")
    if model.producer_name != "troupe":
        fail(f"producer_name is {model.producer_name!r}, expected 'troupe'")


def compare(values, expected, atol):
    logits, probabilities = values["logits"], values["probabilities"]
    if logits.shape != expected.shape:
        fail(f"ONNX logits have shape {logits.shape}, Troupe's {expected.shape}")
    difference = float(np.abs(logits - expected.astype(np.float64)).max())
    ours, theirs = logits.argmax(axis=1), expected.argmax(axis=1)
    top_two = np.sort(logits, axis=1)[:, -2:]
    smallest_gap = float((top_two[:, 1] - top_two[:, 0]).min())
    sums_off = float(np.abs(probabilities.sum(axis=1) - 1.0).max())
    print(f"rows {logits.shape[0]}, classes {logits.shape[1]}")
    print(f"max |logit difference| {difference:.3e} (limit {atol:.0e}), "
          f"smallest top-two logit gap {smallest_gap:.3e}")
    print(f"argmax agrees on {int((ours == theirs).sum())} of {len(ours)} rows")
    print(f"max |sum of probabilities - 1| {sums_off:.3e}")
    if not np.array_equal(ours, theirs):
        rows = np.flatnonzero(ours != theirs)
        fail(f"argmax differs on {len(rows)} rows, first {rows[:10].tolist()}")
    if not difference <= atol:  # also catches NaN
        fail(f"logits differ by up to {difference:.3e}, more than {atol:.0e}")
    if not sums_off <= PROBABILITY_SUM_TOLERANCE:
        fail(f"probabilities sum to 1 only within {sums_off:.3e}")
    if not np.array_equal(probabilities.argmax(axis=1), ours):
        fail("probabilities and logits disagree on the argmax")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model")
    parser.add_argument("features")
    parser.add_argument("logits")
    parser.add_argument("--atol", type=float, default=1e-5)
    args = parser.parse_args()
    try:
        model = onnx.load(args.model)
        onnx.checker.check_model(model, full_check=True)
    except Exception as error:  # onnx raises several kinds; each is a failure here
        fail(f"{args.model} fails onnx.checker: {error}")
    print(f"onnx.checker (full_check): {args.model} passes")
    features = np.load(args.features)
    expected = np.load(args.logits)
    if features.ndim != 2 or expected.ndim != 2 or len(features) != len(expected):
        fail(f"features {features.shape} and logits {expected.shape} are not two matching tables")
    check_interface(model, features)
    compare(evaluate(model.graph, features), expected, args.atol)
    print("PASS")


if __name__ == "__main__":
    main()
