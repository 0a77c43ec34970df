#!/usr/bin/python3
"""ctest: scripts/plot_runs.py draws valid PNGs from real mnist metrics.

    plot_runs_test.py MNIST_BINARY TEST_DATA_DIR

Trains sync and async (2 replicas, 2 epochs) on the test slice with --metrics,
plots the two files, and checks each expected PNG: the signature, the IHDR
chunk, and its width and height. Then a corrupt metrics file must give exit 2
with the file named. Fails (never skips) where matplotlib is missing:
scripts/setup.sh installs python3-matplotlib.
"""
import os
import struct
import subprocess
import sys
import tempfile

SOURCE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PLOT_RUNS = os.path.join(SOURCE_DIR, "scripts", "plot_runs.py")
EXPECTED = ["test_accuracy_vs_time.png", "test_loss_vs_time.png", "test_accuracy_vs_epoch.png",
            "test_loss_vs_epoch.png", "samples_per_second.png", "staleness.png",
            "staleness_histogram.png"]
WIDTH, HEIGHT = 800, 500  # plot_runs.py: figsize (8, 5) at 100 dpi
SLACK = 20                # pixels either way
TIMEOUT = 120             # seconds, each subprocess


def fail(message):
    print(f"FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def run(args):
    try:
        return subprocess.run(args, capture_output=True, text=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        fail(f"timed out after {TIMEOUT}s: {' '.join(args)}")


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(33)
    if len(head) < 33 or head[:8] != b"\x89PNG\r\n\x1a\n":
        fail(f"{path}: no PNG signature")
    length, kind = struct.unpack(">I4s", head[8:16])
    if kind != b"IHDR" or length != 13:
        fail(f"{path}: first chunk is {kind!r} (length {length}), not IHDR")
    return struct.unpack(">II", head[16:24])


def main():
    if len(sys.argv) != 3:
        fail("usage: plot_runs_test.py MNIST_BINARY TEST_DATA_DIR")
    mnist, data_dir = sys.argv[1], sys.argv[2]
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        fail(f"matplotlib is missing for {sys.executable}: "
             "run scripts/setup.sh (installs python3-matplotlib)")
    with tempfile.TemporaryDirectory(prefix="troupe-plot-") as tmp:
        files = []
        for mode in ("sync", "async"):
            metrics = os.path.join(tmp, f"{mode}.jsonl")
            r = run([mnist, f"--mode={mode}", "--replicas=2", "--epochs=2", "--seed=42",
                     f"--data-dir={data_dir}", f"--metrics={metrics}"])
            if r.returncode != 0:
                fail(f"mnist --mode={mode} exited {r.returncode}:\n{r.stdout}\n{r.stderr}")
            files.append(metrics)
        out = os.path.join(tmp, "plots")
        r = run([sys.executable, PLOT_RUNS, *files, "-o", out])
        if r.returncode != 0:
            fail(f"plot_runs.py exited {r.returncode}:\n{r.stdout}\n{r.stderr}")
        for name in EXPECTED:
            path = os.path.join(out, name)
            if not os.path.isfile(path):
                fail(f"{name} was not drawn (have: {sorted(os.listdir(out))})")
            width, height = png_size(path)
            if abs(width - WIDTH) > SLACK or abs(height - HEIGHT) > SLACK:
                fail(f"{name}: {width}x{height}, expected about {WIDTH}x{HEIGHT}")
            print(f"ok: {name} {width}x{height}")

        # A sync run alone has no staleness picture.
        r = run([sys.executable, PLOT_RUNS, files[0], "-o", os.path.join(tmp, "sync-only")])
        if r.returncode != 0 or os.path.exists(os.path.join(tmp, "sync-only", "staleness.png")):
            fail(f"sync-only plot: exit {r.returncode}, staleness.png drawn or not:\n{r.stderr}")

        corrupt = os.path.join(tmp, "corrupt.jsonl")
        with open(files[0]) as f:
            first = f.readline()
        with open(corrupt, "w") as f:
            f.write(first + '{"record": "epoch", "epoch": 2,\n')
        r = run([sys.executable, PLOT_RUNS, files[1], corrupt, "-o", os.path.join(tmp, "bad")])
        if r.returncode != 2 or f"{corrupt}:2" not in r.stderr:
            fail(f"corrupt file: expected exit 2 naming {corrupt}:2, got {r.returncode}:\n"
                 f"{r.stderr}")
        print("ok: corrupt metrics file -> exit 2:", r.stderr.strip())

        empty = os.path.join(tmp, "empty.jsonl")
        open(empty, "w").close()
        r = run([sys.executable, PLOT_RUNS, empty, "-o", os.path.join(tmp, "bad")])
        if r.returncode != 2 or empty not in r.stderr:
            fail(f"empty file: expected exit 2 naming {empty}, got {r.returncode}:\n{r.stderr}")
        print("ok: empty metrics file -> exit 2")
    print("plot_runs test passed")


if __name__ == "__main__":
    main()
