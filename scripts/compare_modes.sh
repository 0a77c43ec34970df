#!/usr/bin/env bash
# Runs every point of the consistency dial (sync, async, ssp with staleness 2,
# delayed with staleness 1; docs/consistency.md) on the same data and seed,
# then draws the plots and a summary table of them:
#   scripts/compare_modes.sh [--out=DIR] [extra mnist args]
# Defaults: Fashion-MNIST (Debian's), 3 epochs, 2 replicas, seed 42; extra
# arguments (--data-dir=..., --epochs=..., --replicas=..., --seed=..., ...) go
# to every run and override the defaults. Writes into DIR (default
# runs/compare-<date>): sync.jsonl, async.jsonl, ssp.jsonl, delayed.jsonl, the PNGs of
# scripts/plot_runs.py and summary.md. Installs what is missing and builds
# mnist first (scripts/setup.sh). See docs/plots.md.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
troupe_build --target mnist

out_dir=""
mnist_args=()
for arg in "$@"; do
  case "$arg" in
    --out=*) out_dir="${arg#--out=}" ;;
    --mode=*|--metrics=*)
      echo "compare_modes: $arg is set by this script (every mode, one metrics file each)" >&2
      exit 2 ;;
    *) mnist_args+=("$arg") ;;
  esac
done
if [ -z "$out_dir" ]; then
  out_dir="$troupe_root/runs/compare-$(date +%Y%m%d-%H%M%S)"
fi
mkdir -p "$out_dir"

# Debian's python3 carries python3-matplotlib; another python3 first on PATH
# (a virtualenv, pyenv) may not.
python=""
for candidate in python3 /usr/bin/python3; do
  if command -v "$candidate" >/dev/null 2>&1 && "$candidate" -c "import matplotlib" 2>/dev/null; then
    python="$candidate"
    break
  fi
done
if [ -z "$python" ]; then
  echo "compare_modes: no python3 with matplotlib (apt-get install python3-matplotlib)" >&2
  exit 1
fi

mnist="$troupe_root/build/examples/mnist"
modes=(sync async ssp delayed)
declare -A mode_options=([ssp]="--staleness=2" [delayed]="--staleness=1")
for mode in "${modes[@]}"; do
  echo "== $mode ${mode_options[$mode]:-}"
  # Later options win in CAF's parser, so the caller's arguments override the defaults.
  # shellcheck disable=SC2086 # the mode's options are a list
  "$mnist" --epochs=3 --replicas=2 --seed=42 "${mnist_args[@]}" \
    --mode="$mode" ${mode_options[$mode]:-} --metrics="$out_dir/$mode.jsonl"
done

runs=()
for mode in "${modes[@]}"; do runs+=("$out_dir/$mode.jsonl"); done
"$python" "$troupe_root/scripts/plot_runs.py" "${runs[@]}" -o "$out_dir" >/dev/null

"$python" - "$out_dir" <<'PY'
import json, os, sys
out = sys.argv[1]
rows = ["| mode | replicas | epochs | final test accuracy | samples/s | wall time (s) | params fnv1a64 |",
        "|---|---|---|---|---|---|---|"]
for mode in ("sync", "async", "ssp", "delayed"):
    epochs, final = [], {}
    with open(os.path.join(out, mode + ".jsonl")) as f:
        for line in f:
            if line.strip():
                r = json.loads(line)
                if r.get("record") == "epoch":
                    epochs.append(r)
                elif r.get("record") == "final":
                    final = r
    wall = sum(e["seconds"] for e in epochs)
    rows.append(f'| {mode} | {final.get("replicas", "?")} | {final.get("epochs", len(epochs))} | '
                f'{final.get("test_accuracy", float("nan")):.4f} | '
                f'{final.get("samples_per_second", float("nan")):.0f} | {wall:.2f} | '
                f'`{final.get("params_fnv1a64", "?")}` |')
pictures = sorted(p for p in os.listdir(out) if p.endswith(".png"))
text = ("# sync, async, ssp (staleness 2), delayed (staleness 1)\n\n" + "\n".join(rows) + "\n\n"
        "Wall time is the sum of the epochs' training times. Pictures: "
        + ", ".join(f"[{p}]({p})" for p in pictures) + " (see docs/plots.md).\n")
with open(os.path.join(out, "summary.md"), "w") as f:
    f.write(text)
print(text)
PY
echo "compare_modes: metrics, plots and summary.md are in $out_dir"
