#!/usr/bin/env python3
"""mnist trains on .npy and CSV sources as on the IDX directory they were
written from, with the same bits; regresses on the labels as float targets
with --loss=mse, with the same bits from .npy, CSV and on two nodes; and
refuses bad data with a clear error.

usage: data_sources_run_test.py MNIST DATA_DIR SCRIPTS_DIR NODE
"""
import os
import re
import socket
import subprocess
import sys
import tempfile

TIMEOUT = 240


def mnist(binary, *args):
    return subprocess.run([binary, "--epochs=1", "--replicas=2", "--seed=7", "--progress=off",
                           *args], capture_output=True, text=True, timeout=TIMEOUT)


def params_of(result, what):
    found = re.search(r"params fnv1a64 ([0-9a-f]{16})", result.stdout)
    if result.returncode != 0 or not found:
        sys.exit(f"FAIL: {what}: exit {result.returncode}\n{result.stdout}\n{result.stderr}")
    return found.group(1)


def expect_refusal(binary, what, args, code, words):
    result = mnist(binary, *args)
    if result.returncode != code or words not in result.stderr:
        sys.exit(f"FAIL: {what}: expected exit {code} and '{words}', got exit "
                 f"{result.returncode}\n{result.stderr}")
    print(f"{what}: exit {code}: {result.stderr.strip().splitlines()[-1]}")


def write_bad_files(out, train_x, train_y):
    with open(train_x, "rb") as f:
        whole = f.read()
    with open(os.path.join(out, "truncated_X.npy"), "wb") as f:
        f.write(whole[: len(whole) // 2])
    labels = open(train_y, "rb").read()
    header_end = labels.index(b"\n") + 1
    with open(os.path.join(out, "short_y.npy"), "wb") as f:  # one label fewer
        header = labels[:header_end].replace(b"(2000,)", b"(1999,)")
        f.write(header + labels[header_end:-1])
    with open(os.path.join(out, "nolabel.csv"), "w") as f:
        f.write("a,b\n1,2\n")
    with open(os.path.join(out, "label12.csv"), "w") as f:
        f.write(",".join(f"p{i}" for i in range(784)) + ",label\n")
        f.write(",".join("0" for _ in range(784)) + ",12\n")
    with open(os.path.join(out, "ragged.csv"), "w") as f:
        f.write(",".join(f"p{i}" for i in range(784)) + ",label\n")
        f.write("0,1\n")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def on_two_nodes(node_binary, run):
    """Runs run(nodes_option) with two node processes listening."""
    ports = [free_port(), free_port()]
    nodes = []
    for port in ports:
        node = subprocess.Popen([node_binary, f"--port={port}"], stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True)
        while "listening" not in (node.stdout.readline() or "listening"):
            pass
        nodes.append(node)
    try:
        return run("--nodes=" + ",".join(f"127.0.0.1:{p}" for p in ports))
    finally:
        for node in nodes:
            node.terminate()
            node.wait(timeout=30)


def regression(binary, out, node_binary):
    """The labels as float targets: --loss=mse trains a linear output on them,
    from .npy (a float y) and from CSV (:target=label) alike."""
    import numpy as np
    for split in ("train", "test"):
        labels = np.load(f"{out}/{split}_y.npy")
        np.save(f"{out}/{split}_yf.npy", labels.astype(np.float32))
    model = ["--model=784-32relu-1", "--loss=mse", "--lr=0.003"]
    npy = params_of(mnist(binary, *model, f"--train={out}/train_X.npy,{out}/train_yf.npy",
                          f"--test={out}/test_X.npy,{out}/test_yf.npy"), "regression .npy")
    csv_run = mnist(binary, *model, f"--train={out}/train.csv:target=label",
                    f"--test={out}/test.csv:target=label")
    csv = params_of(csv_run, "regression CSV")
    loss = float(re.search(r"test_loss ([0-9.]+)", csv_run.stdout).group(1))
    labels = np.load(f"{out}/test_y.npy").astype(np.float64)
    variance = float(np.var(labels))
    print(f"regression: .npy {npy}, CSV {csv}, test mse {loss:.4f} (label variance {variance:.4f})")
    remote = params_of(on_two_nodes(node_binary, lambda nodes: mnist(
        binary, *model, f"--train={out}/train_X.npy,{out}/train_yf.npy",
        f"--test={out}/test_X.npy,{out}/test_yf.npy", nodes, "--replicas-per-node=1")),
        "regression on 2 nodes")
    print(f"regression on 2 nodes: {remote}")
    if not npy == csv == remote:
        sys.exit("FAIL: the same float targets from .npy, CSV or on nodes trained other bits")
    if not loss < 0.5 * variance:
        sys.exit("FAIL: the regression did not learn")
    expect_refusal(binary, "class labels with --loss=mse",
                   [*model, f"--train={out}/train_X.npy,{out}/train_y.npy",
                    f"--test={out}/test_X.npy,{out}/test_y.npy"], 2, "float targets")


def main():
    binary, data_dir, scripts, node_binary = sys.argv[1:5]
    with tempfile.TemporaryDirectory() as out:
        subprocess.run(["/usr/bin/python3", os.path.join(scripts, "make_npy_csv.py"), data_dir,
                        out], check=True, timeout=TIMEOUT)
        npy = [f"--train={out}/train_X.npy,{out}/train_y.npy",
               f"--test={out}/test_X.npy,{out}/test_y.npy"]
        csv = [f"--train={out}/train.csv", f"--test={out}/test.csv"]
        idx = params_of(mnist(binary, f"--data-dir={data_dir}"), "IDX")
        from_npy = params_of(mnist(binary, *npy), ".npy")
        from_csv = params_of(mnist(binary, *csv), "CSV")
        print(f"IDX {idx}, .npy {from_npy}, CSV {from_csv}")
        if not idx == from_npy == from_csv:
            sys.exit("FAIL: the same samples from other sources trained other bits")
        regression(binary, out, node_binary)
        write_bad_files(out, f"{out}/train_X.npy", f"{out}/train_y.npy")
        test = npy[1]
        expect_refusal(binary, "truncated .npy", [f"--train={out}/truncated_X.npy,"
                                                  f"{out}/train_y.npy", test], 1, "truncated")
        expect_refusal(binary, "counts differ", [f"--train={out}/train_X.npy,"
                                                 f"{out}/short_y.npy", test], 1, "1999")
        expect_refusal(binary, "no label column", [f"--train={out}/nolabel.csv", test], 1,
                       "label")
        expect_refusal(binary, "ragged CSV row", [f"--train={out}/ragged.csv", test], 1,
                       "line 2")
        expect_refusal(binary, "label out of the model's range",
                       [f"--train={out}/label12.csv", test], 2,
                       "label12.csv) has label 12 at sample")
        expect_refusal(binary, "--train without --test", [npy[0]], 2, "--test")
        expect_refusal(binary, "missing file", [f"--train={out}/nothere.csv", test], 1,
                       "nothere.csv")
        print("PASS")


if __name__ == "__main__":
    main()
