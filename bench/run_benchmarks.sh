#!/usr/bin/env bash
# Prints docs/benchmarks.md's single-replica, one-process, two-node and wire figures:
#   bench/run_benchmarks.sh [repeats]     (after scripts/quickstart.sh or test.sh built build/)
# Each figure is the median of `repeats` runs (default 3) of one training epoch
# on Fashion-MNIST (60,000 samples), training loop only.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$root/build"
repeats="${1:-3}"
mnist="$build/examples/mnist"
node="$build/examples/node"
for program in "$mnist" "$node" "$build/bench/train_bench"; do
  [ -x "$program" ] || { echo "missing $program: build first (scripts/test.sh)" >&2; exit 1; }
done

work="$(mktemp -d)"
node_pids=()
cleanup() {
  for pid in "${node_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

median() { sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }

# samples/s of the final record of one run: mnist ARGS...
run_once() {
  "$mnist" --epochs=1 --metrics="$work/m.jsonl" "$@" >/dev/null
  tail -n 1 "$work/m.jsonl" | sed 's/.*"samples_per_second":\([0-9.]*\).*/\1/'
}

figure() {
  local label="$1"; shift
  local values=()
  for _ in $(seq "$repeats"); do values+=("$(run_once "$@")"); done
  printf '%-58s %8.0f samples/s  (runs: %s)\n' "$label" \
    "$(printf '%s\n' "${values[@]}" | median)" "$(printf '%.0f ' "${values[@]}")"
}

start_node() {
  "$node" --port=0 >"$work/node$1.log" 2>&1 &
  node_pids+=($!)
  for _ in $(seq 100); do
    grep -q "listening on" "$work/node$1.log" && break
    sleep 0.05
  done
  sed -n 's/.*listening on \([^ ]*\).*/\1/p' "$work/node$1.log"
}

echo "# $(date -u +%F) on $(nproc) cores: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "## single replica, no actors (bench/train_bench)"
"$build/bench/train_bench"
echo "## actor runtime in one process"
figure "sync, 1 replica, batch 32" --replicas=1 --batch-size=32
figure "sync, 2 replicas, global batch 32" --replicas=2 --batch-size=32
figure "sync, 2 replicas, global batch 128" --replicas=2 --batch-size=128
figure "async, 2 replicas, 32 per replica step" --replicas=2 --batch-size=64 --mode=async
echo "## scheduler responsiveness while replicas compute"
"$build/bench/responsiveness_bench"
echo "## coordinator + 2 node processes (1 replica and 1 store shard each) on loopback"
nodes="$(start_node 1),$(start_node 2)"
figure "sync, 2 nodes, global batch 32" --nodes="$nodes" --batch-size=32
figure "sync, 2 nodes, global batch 128" --nodes="$nodes" --batch-size=128
figure "async, 2 nodes, 32 per replica step" --nodes="$nodes" --batch-size=64 --mode=async
if [ -x "$build/bench/wire_bench" ]; then
  echo "## wire: 407 KB gradient round trip between two processes"
  "$build/bench/wire_bench"
fi
