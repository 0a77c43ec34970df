#!/usr/bin/env python3
"""troupe-model on the files mnist writes: it evaluates the saved model to
mnist's own test accuracy, predicts probabilities and logits to .npy and CSV,
the exported ONNX file computes the same logits (check_onnx.py) and
export-onnx writes it again, and corrupt or missing model files and bad
command lines are clear errors.

usage: model_files_test.py MNIST TROUPE_MODEL DATA_DIR SCRIPTS_DIR
"""
import os
import re
import subprocess
import sys
import tempfile

try:
    import numpy as np
except ImportError as missing:
    sys.exit(f"FAIL: {missing}: run this test with a python3 that has numpy (python3-numpy)")

TIMEOUT = 240
PROBABILITY_SUM_TOLERANCE = 1e-5
LOSS_TOLERANCE = 1e-4  # one unit in the last place printed: sums may run in another order


def fail(message):
    sys.exit(f"FAIL: {message}")


def run(args):
    return subprocess.run([str(a) for a in args], capture_output=True, text=True,
                          timeout=TIMEOUT)


def must_succeed(args, what):
    result = run(args)
    if result.returncode != 0:
        fail(f"{what}: exit {result.returncode}\n{result.stdout}\n{result.stderr}")
    return result


def train(mnist, data_dir, model, onnx):
    result = must_succeed([mnist, f"--data-dir={data_dir}", "--epochs=1", "--replicas=2",
                           "--seed=7", "--progress=off", f"--save={model}",
                           f"--export-onnx={onnx}"], "mnist")
    found = re.search(r"Final: test_accuracy ([0-9.]+) - test_loss ([0-9.]+)", result.stdout)
    if not found:
        fail(f"mnist printed no 'Final: test_accuracy' line\n{result.stdout}")
    return found.group(1), found.group(2)


def evaluate(tool, model, source):
    result = must_succeed([tool, "evaluate", model, source], f"evaluate on {source}")
    found = re.fullmatch(r"loss ([0-9.]+) accuracy ([0-9.]+) samples (\d+)\n", result.stdout)
    if not found:
        fail(f"evaluate on {source} printed {result.stdout!r}, not 'loss L accuracy A samples N'")
    return found.groups()


def predict(tool, model, features, output, *flags):
    must_succeed([tool, "predict", model, features, output, *flags],
                 f"predict {features} -> {output} {' '.join(flags)}")
    return output


def load_npy(path, rows, cols):
    values = np.load(path)
    if values.dtype != np.float32 or values.shape != (rows, cols):
        fail(f"{path} holds {values.dtype} {values.shape}, not float32 ({rows}, {cols})")
    return values


def load_csv(path, rows, cols):
    with open(path) as f:
        header = f.readline().strip()
    if header != ",".join(f"p{j}" for j in range(cols)):
        fail(f"{path}: header {header[:60]!r} is not p0,...,p{cols - 1}")
    values = np.loadtxt(path, delimiter=",", skiprows=1, dtype=np.float64, ndmin=2)
    if values.shape != (rows, cols):
        fail(f"{path} holds {values.shape} values, not ({rows}, {cols})")
    return values.astype(np.float32)


def same_bits(a, b, what):
    if a.shape != b.shape or a.tobytes() != b.tobytes():
        fail(f"{what}: not the same bits")
    print(f"{what}: the same bits, {a.shape}")


def check_probabilities(probs, logits, labels, accuracy):
    sums_off = float(np.abs(probs.astype(np.float64).sum(axis=1) - 1.0).max())
    print(f"probabilities: max |row sum - 1| {sums_off:.3e} (limit {PROBABILITY_SUM_TOLERANCE:.0e})")
    if not sums_off <= PROBABILITY_SUM_TOLERANCE:
        fail("the probabilities' rows do not sum to 1")
    agree = int((probs.argmax(axis=1) == logits.argmax(axis=1)).sum())
    print(f"argmax of probabilities equals argmax of logits on {agree} of {len(probs)} rows")
    if agree != len(probs):
        fail("probabilities and logits disagree on the argmax")
    hits = float((logits.argmax(axis=1) == labels).mean())
    print(f"accuracy of the logits' argmax against test_y.npy {hits:.4f}, evaluate's {accuracy}")
    if f"{hits:.4f}" != accuracy:
        fail("the logits' argmax does not score evaluate's accuracy")


def expect_error(tool, args, code, words, what):
    result = run([tool, *args])
    last = result.stderr.strip().splitlines()[-1] if result.stderr.strip() else ""
    if result.returncode != code or not result.stderr.startswith("error: ") \
            or words not in result.stderr:
        fail(f"{what}: expected exit {code} and 'error: ...{words}...', got exit "
             f"{result.returncode}\n{result.stderr}")
    print(f"{what}: exit {code}: {last}")


def compare_evaluations(tool, model, data_dir, arrays, accuracy, loss):
    on_idx = evaluate(tool, model, data_dir)
    print(f"troupe-model evaluate {os.path.basename(data_dir)}/: loss {on_idx[0]} accuracy "
          f"{on_idx[1]} samples {on_idx[2]}; mnist's Final: test_accuracy {accuracy} "
          f"test_loss {loss}")
    if on_idx[1] != accuracy:
        fail(f"evaluate's accuracy {on_idx[1]} is not mnist's test_accuracy {accuracy}")
    if abs(float(on_idx[0]) - float(loss)) > LOSS_TOLERANCE:
        fail(f"evaluate's loss {on_idx[0]} is not mnist's test_loss {loss}")
    for source in (f"{arrays}/test_X.npy,{arrays}/test_y.npy", f"{arrays}/test.csv"):
        other = evaluate(tool, model, source)
        print(f"troupe-model evaluate {os.path.basename(source)}: loss {other[0]} accuracy "
              f"{other[1]} samples {other[2]}")
        if other != on_idx:
            fail(f"evaluate on {source} differs from the IDX directory's")
    return on_idx


def check_predictions(tool, model, onnx, arrays, scripts, accuracy):
    pixels = np.load(f"{arrays}/test_X.npy")
    labels = np.load(f"{arrays}/test_y.npy")
    rows = len(pixels)
    # The floats Troupe scales uint8 pixels to, for a float32 input and for ONNX.
    scaled = (np.arange(256, dtype=np.float32) / np.float32(255))[pixels]
    np.save(f"{arrays}/test_Xf.npy", scaled)
    logits = load_npy(predict(tool, model, f"{arrays}/test_X.npy", f"{arrays}/logits.npy",
                              "--logits"), rows, 10)
    same_bits(load_npy(predict(tool, model, f"{arrays}/test_Xf.npy", f"{arrays}/logits_f.npy",
                               "--logits"), rows, 10), logits,
              "logits of float32 features vs of uint8 pixels (.npy)")
    same_bits(load_csv(predict(tool, model, f"{arrays}/test_X.npy", f"{arrays}/logits.csv",
                               "--logits"), rows, 10), logits, "logits .csv vs .npy")
    probs = load_npy(predict(tool, model, f"{arrays}/test_X.npy", f"{arrays}/probs.npy"),
                     rows, 10)
    check_probabilities(probs, logits, labels, accuracy)
    same_bits(load_csv(predict(tool, model, f"{arrays}/test_X.npy", f"{arrays}/probs.csv"),
                       rows, 10), probs, "probabilities .csv vs .npy")
    same_bits(load_npy(predict(tool, model, f"{arrays}/test.csv", f"{arrays}/probs_csv.npy"),
                       rows, 10), probs, "probabilities from test.csv (label dropped) vs .npy")
    result = run([sys.executable, os.path.join(scripts, "check_onnx.py"), onnx,
                  f"{arrays}/test_Xf.npy", f"{arrays}/logits.npy"])
    print("check_onnx.py " + os.path.basename(onnx) + ":\n  "
          + "\n  ".join(result.stdout.strip().splitlines()))
    if result.returncode != 0:
        fail(f"check_onnx.py: exit {result.returncode}\n{result.stderr}")


def check_export(tool, model, onnx, out):
    again = os.path.join(out, "again.onnx")
    must_succeed([tool, "export-onnx", model, again], "export-onnx")
    with open(onnx, "rb") as f, open(again, "rb") as g:
        ours, theirs = g.read(), f.read()
    print(f"troupe-model export-onnx: {len(ours)} bytes, "
          f"{'the same' if ours == theirs else 'NOT the same'} as mnist's --export-onnx")
    if ours != theirs:
        fail("export-onnx of the saved model differs from mnist's --export-onnx")


def check_refusals(tool, model, data_dir, out):
    with open(model, "rb") as f:
        content = bytearray(f.read())
    content[len(content) // 2] ^= 0xFF
    corrupt = os.path.join(out, "corrupt.troupe")
    with open(corrupt, "wb") as f:
        f.write(content)
    expect_error(tool, ["evaluate", corrupt, data_dir], 1, "corrupt.troupe",
                 "corrupted model (a byte flipped)")
    expect_error(tool, ["evaluate", os.path.join(out, "nothere.troupe"), data_dir], 1,
                 "nothere.troupe", "missing model file")
    narrow = os.path.join(out, "narrow.csv")
    with open(narrow, "w") as f:
        f.write("a,b\n1,2\n")
    expect_error(tool, ["predict", model, narrow, os.path.join(out, "p.npy")], 1, "784",
                 "features of the wrong width")
    expect_error(tool, [], 2, "no command", "no command")
    expect_error(tool, ["evaluate", model], 2, "evaluate takes", "too few arguments")
    expect_error(tool, ["predict", model, narrow, os.path.join(out, "p.txt")], 2,
                 ".npy or .csv", "unknown output format")
    expect_error(tool, ["train", model], 2, "unknown command", "unknown command")
    usage = run([tool, "--help"])
    if usage.returncode != 0 or "troupe-model predict" not in usage.stdout:
        fail(f"--help: exit {usage.returncode}\n{usage.stdout}")
    print("--help: exit 0")


def main():
    if len(sys.argv) != 5:
        fail(__doc__.strip().splitlines()[-1])
    mnist, tool, data_dir, scripts = sys.argv[1:5]
    with tempfile.TemporaryDirectory() as out:
        model, onnx = os.path.join(out, "model.troupe"), os.path.join(out, "model.onnx")
        accuracy, loss = train(mnist, data_dir, model, onnx)
        arrays = os.path.join(out, "arrays")
        must_succeed([sys.executable, os.path.join(scripts, "make_npy_csv.py"), data_dir,
                      arrays], "make_npy_csv.py")
        compare_evaluations(tool, model, data_dir, arrays, accuracy, loss)
        check_predictions(tool, model, onnx, arrays, scripts, accuracy)
        check_export(tool, model, onnx, out)
        check_refusals(tool, model, data_dir, out)
        print("PASS")


if __name__ == "__main__":
    main()
