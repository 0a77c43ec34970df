#!/usr/bin/python3
"""Draws the pictures of one or more Troupe runs from their --metrics files.

    scripts/plot_runs.py RUN.jsonl [RUN2.jsonl ...] -o DIR

Each file is the JSON lines `build/examples/mnist --metrics=FILE` writes (one
"epoch" record per epoch, then one "final" record; see actors/report/metrics_log.cpp).
The runs are overlaid, each labelled with its mode and replicas, into DIR:

  test_accuracy_vs_time.png   test accuracy after each epoch vs wall-clock time
  test_loss_vs_time.png       test loss after each epoch vs wall-clock time
  test_accuracy_vs_epoch.png  test accuracy vs epoch
  test_loss_vs_epoch.png      test loss vs epoch
  samples_per_second.png      training throughput of each epoch
  staleness.png               runs that report staleness only (see below)
  staleness_histogram.png     the same runs: their gradients by staleness

Wall-clock time is the sum of the epochs' "seconds" (the training time of each
epoch) up to the end of that epoch.

Staleness: staleness.png plots each epoch's mean (solid) and maximum (dashed)
staleness of every run whose policy reports it (async, ssp, delayed), and
staleness_histogram.png how many gradients of the whole run were 0, 1, 2, ...
versions stale (the epochs' "staleness_histogram" added up; the last bucket,
64, holds 64 and more). Neither is drawn when no run reports staleness (sync
runs have none).

Needs Python 3 with matplotlib (Debian: python3-matplotlib, which
scripts/setup.sh installs); it draws with the Agg backend, no display needed.
Exit status: 0 drawn, 2 a bad input file (the message names the file and the
line), 1 anything else (e.g. matplotlib missing).
"""
import argparse
import json
import os
import sys

FIG_SIZE = (8, 5)  # inches; at DPI this is 800 x 500 pixels
DPI = 100


class InputError(Exception):
    """A metrics file that cannot be plotted; exit status 2."""


def load_run(path):
    """Returns {"path", "label", "mode", "replicas", "epochs": [...], "final": {...}|None}."""
    if not os.path.exists(path):
        raise InputError(f"{path}: no such file")
    if os.path.isdir(path):
        raise InputError(f"{path}: is a directory, not a metrics file")
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"{path}: cannot read: {e}")
    if not any(line.strip() for line in lines):
        raise InputError(f"{path}: empty file (no metrics records)")
    epochs, final = [], None
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as e:
            raise InputError(f"{path}:{number}: not JSON ({e.msg})")
        if not isinstance(record, dict):
            raise InputError(f"{path}:{number}: not a JSON object")
        kind = record.get("record")
        if kind == "epoch":
            missing = [k for k in ("epoch", "mode", "replicas", "test_accuracy", "test_loss",
                                   "seconds", "samples_per_second") if k not in record]
            if missing:
                raise InputError(f"{path}:{number}: epoch record without {', '.join(missing)}")
            epochs.append(record)
        elif kind == "final":
            final = record
    if not epochs:
        raise InputError(f"{path}: no epoch records (is it an mnist --metrics file?)")
    first = epochs[0]
    return {"path": path, "mode": str(first["mode"]), "replicas": first["replicas"],
            "epochs": epochs, "final": final}


def label_runs(runs):
    """mode and replicas; the file's name too where two runs would read the same."""
    base = [f'{r["mode"]}, {r["replicas"]} replica{"s" if r["replicas"] != 1 else ""}'
            for r in runs]
    for run, label in zip(runs, base):
        if base.count(label) > 1:
            label += f" ({os.path.basename(run['path'])})"
        run["label"] = label


def draw(runs, out_dir):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def series(run, key):
        return [e[key] for e in run["epochs"]]

    def wall_clock(run):
        total, out = 0.0, []
        for e in run["epochs"]:
            total += e["seconds"]
            out.append(total)
        return out

    def figure(name, title, xlabel, ylabel, plot_one, which=runs):
        fig, ax = plt.subplots(figsize=FIG_SIZE, dpi=DPI)
        for run in which:
            plot_one(ax, run)
        ax.set_title(title)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.grid(True, alpha=0.3)
        ax.legend()
        path = os.path.join(out_dir, name)
        fig.savefig(path, dpi=DPI)
        plt.close(fig)
        return path

    def epoch_axis(ax):
        ax.xaxis.get_major_locator().set_params(integer=True)

    written = []
    for key, what in (("test_accuracy", "test accuracy"), ("test_loss", "test loss")):
        written.append(figure(
            f"{key}_vs_time.png", f"{what.capitalize()} vs wall-clock time",
            "wall-clock time (s, sum of epoch times)", what,
            lambda ax, r, key=key: ax.plot(wall_clock(r), series(r, key), marker="o",
                                           label=r["label"])))
        written.append(figure(
            f"{key}_vs_epoch.png", f"{what.capitalize()} vs epoch", "epoch", what,
            lambda ax, r, key=key: (ax.plot(series(r, "epoch"), series(r, key), marker="o",
                                            label=r["label"]), epoch_axis(ax))))
    written.append(figure(
        "samples_per_second.png", "Training throughput per epoch", "epoch", "samples/s",
        lambda ax, r: (ax.plot(series(r, "epoch"), series(r, "samples_per_second"),
                               marker="o", label=r["label"]), epoch_axis(ax))))

    async_runs = [r for r in runs if r["mode"] != "sync" and
                  all("staleness_mean" in e for e in r["epochs"])]
    if async_runs:
        def staleness(ax, r):
            line, = ax.plot(series(r, "epoch"), series(r, "staleness_mean"), marker="o",
                            label=f'{r["label"]}: mean')
            if all("staleness_max" in e for e in r["epochs"]):
                ax.plot(series(r, "epoch"), series(r, "staleness_max"), linestyle="--",
                        color=line.get_color(), label=f'{r["label"]}: max')
            epoch_axis(ax)
        written.append(figure(
            "staleness.png", "Staleness per epoch of runs that report it (mean and max)",
            "epoch", "staleness (versions behind)", staleness, which=async_runs))
        counted = [r for r in async_runs
                   if any(e.get("staleness_histogram") for e in r["epochs"])]
        if counted:
            def histogram(ax, r):
                counts = []
                for e in r["epochs"]:
                    for t, n in enumerate(e.get("staleness_histogram", [])):
                        counts.extend([0] * (t + 1 - len(counts)))
                        counts[t] += n
                ax.step(range(len(counts)), counts, where="mid", marker="o", label=r["label"])
                ax.xaxis.get_major_locator().set_params(integer=True)
            written.append(figure(
                "staleness_histogram.png", "Gradients by staleness over the whole run",
                "staleness (versions behind)", "gradients", histogram, which=counted))
    return written


def main(argv=None):
    parser = argparse.ArgumentParser(
        description="Plot Troupe runs (mnist --metrics JSON lines) into PNG files.",
        epilog="Writes test_accuracy/test_loss vs time and vs epoch, samples_per_second and, "
               "for runs that report staleness (async, ssp, delayed), its mean and max per "
               "epoch. Exit 2: bad input file.")
    parser.add_argument("runs", nargs="+", metavar="RUN.jsonl", help="metrics files to overlay")
    parser.add_argument("-o", "--out", required=True, metavar="DIR",
                        help="directory to write the PNG files into (created if missing)")
    args = parser.parse_args(argv)
    try:
        runs = [load_run(path) for path in args.runs]
    except InputError as e:
        print(f"plot_runs: {e}", file=sys.stderr)
        return 2
    label_runs(runs)
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print(f"plot_runs: matplotlib is missing for {sys.executable} "
              "(Debian: apt-get install python3-matplotlib, or run scripts/setup.sh)",
              file=sys.stderr)
        return 1
    os.makedirs(args.out, exist_ok=True)
    for path in draw(runs, args.out):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
