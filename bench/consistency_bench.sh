#!/usr/bin/env bash
# Which point of the consistency dial trains fastest to a given accuracy?
# Trains Fashion-MNIST with 4 replicas, one slowed 3x (--slow-replica=3:3),
# under sync, sync with 1 backup, delayed K=1, ssp K=2 and K=8, and async
# with and without the staleness-aware learning rate, and prints a Markdown
# table: training time and epochs to the target test accuracy, the accuracy
# after all epochs, mean/max staleness and dropped gradients.
#   bench/consistency_bench.sh [epochs=5] [target=0.85]   (after scripts/test.sh)
# Time to target counts the training loop of each epoch (no evaluation), up
# to the end of the first epoch whose test accuracy reaches the target: the
# metrics have one record per epoch, so that is the resolution.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mnist="$root/build/examples/mnist"
epochs="${1:-5}"
target="${2:-0.85}"
data="${TROUPE_DATA_DIR:-/usr/share/datasets/fashion-mnist}"
[ -x "$mnist" ] || { echo "missing $mnist: build first (scripts/test.sh)" >&2; exit 1; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

policies=(
  "sync|--mode=sync"
  "sync, 1 backup|--mode=sync --backup-replicas=1"
  "delayed K=1|--mode=delayed --staleness=1"
  "ssp K=2|--mode=ssp --staleness=2"
  "ssp K=8|--mode=ssp --staleness=8"
  "async|--mode=async"
  "async, staleness-aware lr|--mode=async --staleness-lr=inverse"
)
echo "# $(date -u +%F) on $(nproc) cores: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
echo "# mnist --replicas=4 --batch-size=128 --slow-replica=3:3 --epochs=$epochs --seed=42, target $target"
echo
echo "| policy | time to $target (s) | epochs to $target | accuracy after $epochs epochs | staleness mean / max | dropped |"
echo "|---|---:|---:|---:|---:|---:|"
for entry in "${policies[@]}"; do
  label="${entry%%|*}"
  options="${entry#*|}"
  metrics="$work/run.jsonl"
  # shellcheck disable=SC2086 # the options are a list
  "$mnist" --data-dir="$data" --replicas=4 --batch-size=128 --slow-replica=3:3 \
    --epochs="$epochs" --seed=42 --metrics="$metrics" $options >"$work/out.txt" 2>&1 \
    || { echo "| $label | failed: $(tail -n 1 "$work/out.txt") | | | | |"; continue; }
  /usr/bin/python3 - "$metrics" "$target" "$label" <<'PY'
import json, sys
path, target, label = sys.argv[1], float(sys.argv[2]), sys.argv[3]
epochs = [r for r in map(json.loads, open(path)) if r.get("record") == "epoch"]
seconds, reached = 0.0, None
for r in epochs:
    seconds += r["seconds"]
    if reached is None and r["test_accuracy"] >= target:
        reached = (seconds, r["epoch"])
pushes = sum(r["pushes"] for r in epochs)
mean = sum(r["staleness_mean"] * r["pushes"] for r in epochs) / pushes if pushes else 0
worst = max(r["staleness_max"] for r in epochs)
dropped = sum(r.get("dropped", 0) for r in epochs)
time_text = f"{reached[0]:.1f}" if reached else "not reached"
epoch_text = str(reached[1]) if reached else "-"
print(f"| {label} | {time_text} | {epoch_text} | {epochs[-1]['test_accuracy']:.4f} | "
      f"{mean:.2f} / {worst} | {dropped} |")
PY
done
