#!/usr/bin/env python3
"""Installs Troupe into a scratch prefix, builds examples/custom_model against
it out of the tree (find_package(Troupe)), and trains its factorization
machine: sync with 2 replicas here, with 2 store shards, from the example's
registered data source instead of its CSV files, and on 2 node processes
that open that source themselves must give the same params_fnv1a64; an
async run must learn too.

It also builds docs/api.md's smallest complete program (its first cpp and
cmake blocks) against the same prefix and runs it on the test data.

usage: custom_model_test.py CMAKE BUILD_DIR SOURCE_DIR TEST_DATA_DIR
"""
import os
import re
import socket
import subprocess
import sys
import tempfile
import time

TIMEOUT = 240


def run(cmd, **kw):
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT, **kw)
    if result.returncode != 0:
        sys.exit(f"FAIL: {' '.join(cmd)} exited {result.returncode}\n{result.stdout}\n{result.stderr}")
    return result.stdout


def final_line(output):
    found = re.search(r"Final: test_accuracy ([0-9.]+) .* params fnv1a64 ([0-9a-f]{16})", output)
    if not found:
        sys.exit(f"FAIL: no Final line in\n{output}")
    return float(found.group(1)), found.group(2)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_node(binary, port):
    node = subprocess.Popen([binary, f"--port={port}"], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    deadline = time.time() + 30
    while time.time() < deadline:
        line = node.stdout.readline()
        if "listening" in line:
            return node
        if not line and node.poll() is not None:
            break
    node.kill()
    sys.exit(f"FAIL: {binary} --port={port} did not start listening")


def docs_program(cmake, source_dir, prefix, scratch, data_dir):
    with open(os.path.join(source_dir, "docs", "api.md")) as f:
        text = f.read()
    blocks = {}
    for language, body in re.findall(r"```(cpp|cmake)\n(.*?)```", text, re.S):
        blocks.setdefault(language, body)
    project = os.path.join(scratch, "hello")
    os.mkdir(project)
    with open(os.path.join(project, "hello.cpp"), "w") as f:
        f.write(blocks["cpp"])
    with open(os.path.join(project, "CMakeLists.txt"), "w") as f:
        f.write(blocks["cmake"])
    run([cmake, "-S", project, "-B", os.path.join(project, "build"),
         f"-DCMAKE_PREFIX_PATH={prefix}"])
    run([cmake, "--build", os.path.join(project, "build")])
    output = run([os.path.join(project, "build", "hello"), f"--data-dir={data_dir}",
                  "--epochs=1", "--replicas=2", "--progress=off"], cwd=project)
    if "test accuracy" not in output or not os.path.exists(os.path.join(project, "hello.troupe")):
        sys.exit(f"FAIL: docs/api.md's program did not train and save:\n{output}")
    print("docs/api.md's program: " + output.strip().splitlines()[-1])


def refused_by_stock_node(prefix, common):
    """The installed troupe-node has not registered "fm": it must say so."""
    port = free_port()
    node = start_node(os.path.join(prefix, "bin", "troupe-node"), port)
    try:
        result = subprocess.run(common + ["--mode=sync", "--replicas-per-node=1",
                                          f"--nodes=127.0.0.1:{port}"],
                                capture_output=True, text=True, timeout=TIMEOUT)
    finally:
        node.terminate()
        node.wait(timeout=30)
    if result.returncode == 0 or "no model is registered as 'fm'" not in result.stderr:
        sys.exit(f"FAIL: a node without the model was not refused clearly:\n{result.stderr}")
    print("stock troupe-node:     " + result.stderr.strip().splitlines()[-1])


def main():
    cmake, build_dir, source_dir, data_dir = sys.argv[1:5]
    with tempfile.TemporaryDirectory() as scratch:
        prefix = os.path.join(scratch, "prefix")
        run([cmake, "--install", build_dir, "--prefix", prefix])
        for leaked in ("actors", "model", "messages", "common"):
            if os.path.exists(os.path.join(prefix, "include", leaked)):
                sys.exit(f"FAIL: internal headers installed: include/{leaked}")
        if not os.access(os.path.join(prefix, "bin", "troupe-node"), os.X_OK):
            sys.exit("FAIL: bin/troupe-node is not installed")
        docs_program(cmake, source_dir, prefix, scratch, data_dir)
        project = os.path.join(scratch, "build")
        run([cmake, "-S", os.path.join(source_dir, "examples", "custom_model"), "-B", project,
             f"-DCMAKE_PREFIX_PATH={prefix}", "-DCMAKE_BUILD_TYPE=Release"])
        run([cmake, "--build", project, "-j", "2"])
        train = os.path.join(project, "fm_train")
        node_binary = os.path.join(project, "fm_node")
        data = os.path.join(scratch, "data")
        os.mkdir(data)
        run([train, "generate", data])
        settings = ["--epochs=3", "--batch-size=32", "--seed=3", "--progress=off"]
        common = [train, f"--train={data}/train.csv", f"--test={data}/test.csv"] + settings
        computed = [train, "--train=interaction:rows=4096,seed=1",
                    "--test=interaction:rows=1024,seed=2"] + settings
        local = final_line(run(common + ["--mode=sync", "--replicas=2"]))
        sharded = final_line(run(common + ["--mode=sync", "--replicas=2", "--store-shards=2"]))
        from_source = final_line(run(computed + ["--mode=sync", "--replicas=2"]))
        ports = [free_port(), free_port()]
        nodes = [start_node(node_binary, port) for port in ports]
        try:
            remote = final_line(run(computed + [
                "--mode=sync", "--replicas-per-node=1",
                "--nodes=" + ",".join(f"127.0.0.1:{port}" for port in ports)]))
        finally:
            for node in nodes:
                node.terminate()
                node.wait(timeout=30)
        async_run = final_line(run(common + ["--mode=async", "--replicas=2"]))
        refused_by_stock_node(prefix, common)
        print(f"local sync 2 replicas: accuracy {local[0]:.4f}, params {local[1]}")
        print(f"2 store shards:        accuracy {sharded[0]:.4f}, params {sharded[1]}")
        print(f"registered source:     accuracy {from_source[0]:.4f}, params {from_source[1]}")
        print(f"2 node processes:      accuracy {remote[0]:.4f}, params {remote[1]}")
        print(f"async 2 replicas:      accuracy {async_run[0]:.4f}")
        if not (local[1] == sharded[1] == from_source[1] == remote[1]):
            sys.exit("FAIL: sync parameters differ between placements or between the CSV "
                     "files and the registered source they were written from")
        # A linear model scores about 0.5 here: the label is x0 * x1 > 0.
        if local[0] < 0.9 or async_run[0] < 0.9:
            sys.exit("FAIL: the factorization machine did not learn the interaction")
        print("PASS")


if __name__ == "__main__":
    main()
