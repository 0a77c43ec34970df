#!/usr/bin/python3
"""Checks an ONNX model that Troupe exported against Troupe's own logits.

    check_onnx.py MODEL.onnx FEATURES.npy LOGITS.npy [--atol A]

Runs onnx.checker (full check, with shape inference), checks the interface
(one input "input" of shape (batch, features) with a symbolic batch, outputs
"logits" and "probabilities"), then evaluates the graph independently of any
ONNX runtime: numpy in float64, node by node, for the ops an MLP uses (Gemm,
MatMul, Add, Relu, Softmax). The logits must have Troupe's argmax on every row
and lie within A (1e-5) of Troupe's; every row of probabilities must sum to 1.
Prints the figures; exits 1 on a failed check, 2 when onnx or numpy is missing
(python3-onnx, python3-numpy).
"""
import argparse
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


OPS = {
    "Gemm": gemm,
    "MatMul": lambda inputs, attrs: inputs[0] @ inputs[1],
    "Add": lambda inputs, attrs: inputs[0] + inputs[1],
    "Relu": lambda inputs, attrs: np.maximum(inputs[0], 0.0),
    "Softmax": softmax,
}


def evaluate(graph, features):
    """Runs the graph's nodes in order (ONNX lists them topologically)."""
    values = {t.name: numpy_helper.to_array(t).astype(np.float64) for t in graph.initializer}
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
