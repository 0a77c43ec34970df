#!/usr/bin/python3
"""ctest: what a run shows while and after it trains, on the test slice.

    run_visibility_test.py MNIST_BINARY TEST_DATA_DIR

Under a pseudo-terminal (script -qfec) mnist draws the live progress bar;
piped, it prints today's plain epoch lines and no bar. With --log-every the
metrics get step records, and the final record (and the output) name the
replica slowed by --slow-replica as the straggler.
"""
import json
import os
import shlex
import subprocess
import sys
import tempfile

TIMEOUT = 120  # seconds, each run


def fail(message):
    print(f"FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def run(args):
    try:
        done = subprocess.run(args, capture_output=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        fail(f"timed out after {TIMEOUT}s: {' '.join(args)}")
    if done.returncode != 0:
        fail(f"exit {done.returncode}: {' '.join(args)}\n{done.stdout!r}\n{done.stderr!r}")
    return done.stdout.decode()  # bytes first: text mode would turn the bar's \r into \n


def main():
    mnist, data = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as work:
        metrics = os.path.join(work, "run.jsonl")
        # 3 replicas, 84 rounds per epoch; replica 0 at 200x makes each epoch
        # last 0.5 s (AMD Zen 5) to 3 s (Zen 3): several progress polls
        # (100 ms apart). At 30x a Zen 5 host finished an epoch in 0.08 s,
        # before the first poll, and drew no bar.
        command = [mnist, f"--data-dir={data}", "--replicas=3", "--batch-size=24",
                   "--epochs=2", "--slow-replica=0:200", f"--metrics={metrics}",
                   "--log-every=10"]
        piped = run(command)
        if "ETA:" in piped or "\r" in piped:
            fail(f"a piped run drew the progress bar:\n{piped}")
        if piped.count("Epoch ") != 2:
            fail(f"a piped run should print 2 epoch lines:\n{piped}")
        if "straggler: replica 0" not in piped:
            fail(f"the output names no straggler:\n{piped}")

        records = [json.loads(line) for line in open(metrics)]
        steps = [r for r in records if r["record"] == "step"]
        if len(steps) < 3:
            fail(f"--log-every=10 wrote {len(steps)} step records")
        # One record per multiple of 10 crossed, at the first poll after it.
        tens = [r["step"] // 10 for r in steps]
        if tens[0] < 1 or any(b <= a for a, b in zip(tens, tens[1:])):
            fail(f"step records do not cross a new multiple of 10 each: "
                 f"{[r['step'] for r in steps]}")
        if any(not (0 < r["loss"] < 10) or r["samples"] <= 0 for r in steps):
            fail(f"implausible step records: {steps[:3]}")
        final = records[-1]
        if final["record"] != "final" or final.get("straggler") != 0:
            fail(f"the final record names no straggler 0: {final}")
        if len(final["replica_pace"]) != 3:
            fail(f"replica_pace should have 3 entries: {final['replica_pace']}")

        terminal = run(["script", "-qfec", shlex.join(command), "/dev/null"])
        if "ETA:" not in terminal or "\r" not in terminal or "[" not in terminal:
            fail(f"a run on a terminal drew no progress bar:\n{terminal!r}")
    print("ok: bar on a terminal only, step records, straggler named")


if __name__ == "__main__":
    main()
