#!/usr/bin/python3
"""ctest: mnist --trace writes a Chrome trace of every round, on the test slice.

    trace_test.py MNIST_BINARY TEST_DATA_DIR

A real run (2 replicas, 2 store shards, 2 epochs, a checkpoint per epoch)
must write JSON with a named track per replica and per shard, one "round"
span per round on each replica's track with its compute and wait inside it
and, but for an epoch's first round, the gathering of its samples inside the
wait of the round before (the replica copies them while it waits), one
"step" span per round on each shard's track, spans in time order, and
instant events for the epoch ends and checkpoints; the metadata states the
clock's error bound. A second run across two node processes (a shard on
each) puts its events on the coordinator's clock with a bound of half a
round trip, and each replica's round holds a "join" per shard inside its
wait: it copies each answer as it comes. A third run, on nodes without
shared-memory lanes and with --pushes-ahead, holds a "send" inside each
round's compute: the replica sends the other node's shard its slice while
the model computes on.
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import time

TIMEOUT = 120
ROUNDS_PER_EPOCH = 63  # 2000 samples / batch 32, rounded up
EPOCHS = 2
EPS = 0.01  # microseconds: the file rounds to nanoseconds


def fail(message):
    print(f"FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def run(args):
    try:
        done = subprocess.run(args, capture_output=True, text=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        fail(f"timed out after {TIMEOUT}s: {' '.join(args)}")
    if done.returncode != 0:
        fail(f"exit {done.returncode}: {' '.join(args)}\n{done.stdout}\n{done.stderr}")


def inside(part, outer):
    """Says whether span `part` lies within span `outer`."""
    return part["ts"] >= outer["ts"] - EPS \
        and part["ts"] + part["dur"] <= outer["ts"] + outer["dur"] + EPS


def check_tracks(events, replicas, shards):
    names = {e["tid"]: e["args"]["name"] for e in events if e["ph"] == "M"}
    expected = {1 + i: f"replica {i}" for i in range(replicas)}
    expected.update({1001 + k: f"store shard {k}" for k in range(shards)})
    for tid, name in expected.items():
        if names.get(tid) != name:
            fail(f"track {tid} should be named {name!r}, is {names.get(tid)!r}")


def check_round_parts(i, n, r, parts, joins, sends):
    """Checks round span `r` (the n-th) of replica i and returns its wait."""
    names = sorted(p["name"] for p in parts)
    gathered = n % ROUNDS_PER_EPOCH != 0
    expected = ["compute"] + (["gather"] if gathered else []) + ["join"] * joins \
        + ["send"] * sends
    if names != sorted(expected + ["wait"]):
        fail(f"replica {i} round {r['args']['round']}: parts {parts}")
    for p in parts:
        if p["name"] != "gather" and not inside(p, r):
            fail(f"replica {i}: {p} is not inside {r}")
    compute = next(p for p in parts if p["name"] == "compute")
    wait = next(p for p in parts if p["name"] == "wait")
    if wait["ts"] < compute["ts"] + compute["dur"] - EPS:
        fail(f"replica {i}: wait before compute ends: {compute} {wait}")
    for p in parts:
        if p["name"] == "join" and not inside(p, wait):
            fail(f"replica {i}: {p} is not inside the wait {wait}")
        if p["name"] == "send" and not inside(p, compute):
            fail(f"replica {i}: {p} is not inside the compute {compute}")
    return wait


def check_replica(events, i, joins, sends):
    spans = [e for e in events if e["ph"] == "X" and e["tid"] == 1 + i]
    round_spans = [e for e in spans if e["cat"] == "round"]
    if len(round_spans) != EPOCHS * ROUNDS_PER_EPOCH:
        fail(f"replica {i}: {len(round_spans)} round spans, "
             f"expected {EPOCHS * ROUNDS_PER_EPOCH}")
    starts = [e["ts"] for e in round_spans]
    if starts != sorted(starts):
        fail(f"replica {i}: round spans out of time order")
    for a, b in zip(round_spans, round_spans[1:]):
        if b["ts"] < a["ts"] + a["dur"] - EPS:
            fail(f"replica {i}: rounds overlap: {a} {b}")
    inner = {}
    for e in spans:
        if e["cat"] == "replica":
            inner.setdefault(e["args"]["round"], []).append(e)
    waits = {}
    for n, r in enumerate(round_spans):
        waits[r["args"]["round"]] = check_round_parts(i, n, r, inner.get(r["args"]["round"], []),
                                                      joins, sends)
    for e in spans:
        if e.get("name") != "gather":
            continue
        before = waits.get(e["args"]["round"] - 1)
        if before is None or not inside(e, before):
            fail(f"replica {i}: {e} is not inside the wait before it, {before}")


def check_trace(path, replicas, shards, joins, sends=0):
    try:
        trace = json.load(open(path))
    except (OSError, ValueError) as e:
        fail(f"{path} is not JSON: {e}")
    events = trace["traceEvents"]
    check_tracks(events, replicas, shards)
    for i in range(replicas):
        check_replica(events, i, joins, sends)
    for k in range(shards):
        steps = [e for e in events if e["ph"] == "X" and e["tid"] == 1001 + k]
        if len(steps) != EPOCHS * ROUNDS_PER_EPOCH:
            fail(f"shard {k}: {len(steps)} step spans, expected {EPOCHS * ROUNDS_PER_EPOCH}")
        if [e["args"]["round"] for e in steps] != sorted(e["args"]["round"] for e in steps):
            fail(f"shard {k}: steps out of round order")
    instants = [e["name"] for e in events if e["ph"] == "i"]
    for n in range(1, EPOCHS + 1):
        if f"epoch {n} end" not in instants:
            fail(f"no 'epoch {n} end' instant in {instants}")
    if "clock_error_us" not in trace.get("otherData", {}):
        fail("the metadata states no clock error bound")
    return trace


def start_node(mnist, work, name, *options):
    node = os.path.join(os.path.dirname(mnist), "node")
    log = open(os.path.join(work, name + ".log"), "w+")
    proc = subprocess.Popen([node, "--port=0", *options], stdout=log, stderr=subprocess.STDOUT)
    deadline = time.time() + 20
    while time.time() < deadline:
        log.seek(0)
        match = re.search(r"listening on (\S+)", log.read())
        if match:
            return proc, match.group(1)
        time.sleep(0.05)
    proc.kill()
    fail(f"node {name} did not start")


def run_on_nodes(mnist, work, common, name, joins, sends, options=()):
    """Runs on two node processes (a replica and a shard each) and checks
    the trace: events on the coordinator's clock, `joins` joins in each
    round's wait and `sends` slices sent inside its compute."""
    nodes = [start_node(mnist, work, f"{name}{n}", *options) for n in range(2)]
    try:
        path = os.path.join(work, name + ".trace.json")
        run([mnist, *common, "--nodes=" + ",".join(a for _, a in nodes), f"--trace={path}"])
        trace = check_trace(path, 2, 2, joins, sends)
        bound = trace["otherData"]["clock_error_us"]
        if not 0 < bound < 1e6:
            fail(f"the clock error bound across nodes should be a round trip, is {bound} us")
    finally:
        for proc, _ in nodes:
            proc.terminate()
            proc.wait(timeout=20)


def main():
    mnist, data = sys.argv[1], sys.argv[2]
    common = [f"--data-dir={data}", f"--epochs={EPOCHS}", "--batch-size=32"]
    with tempfile.TemporaryDirectory() as work:
        path = os.path.join(work, "run.trace.json")
        run([mnist, *common, "--replicas=2", "--store-shards=2", f"--trace={path}",
             f"--checkpoint={os.path.join(work, 'run.ckpt')}"])
        trace = check_trace(path, 2, 2, 0)
        if [e["name"] for e in trace["traceEvents"] if e["ph"] == "i"].count("checkpoint") != 2:
            fail("expected a checkpoint instant per epoch")

        run_on_nodes(mnist, work, common, "nodes", joins=2, sends=0)
        run_on_nodes(mnist, work, common + ["--pushes-ahead"], "sockets", joins=2, sends=1,
                     options=["--no-host-lanes"])
    print("ok: tracks, rounds, nesting, order, joins, sends, instants, clock bound")


if __name__ == "__main__":
    main()
