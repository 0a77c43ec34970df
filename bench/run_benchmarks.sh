#!/usr/bin/env bash
# Prints docs/benchmarks.md's single-replica, one-process, two-node and wire figures:
#   bench/run_benchmarks.sh [repeats]     (after scripts/quickstart.sh or test.sh built build/)
# Each figure is the median of `repeats` runs (default 3) of one training epoch
# on Fashion-MNIST (60,000 samples), training loop only.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$root/build/examples" # mnist and node, for loopback_nodes.sh
bench="$root/build/bench"
repeats="${1:-3}"
mnist="$build/mnist"
[ -x "$bench/train_bench" ] || { echo "missing $bench/train_bench: build first (scripts/test.sh)" >&2; exit 1; }
# shellcheck source=bench/loopback_nodes.sh
source "$root/bench/loopback_nodes.sh" # $work, start_node; stops the nodes on exit

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


echo "# $(date -u +%F) on $(nproc) cores: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "## single replica, no actors (bench/train_bench)"
"$bench/train_bench"
echo "## actor runtime in one process"
figure "sync, 1 replica, batch 32" --replicas=1 --batch-size=32
figure "sync, 2 replicas, global batch 32" --replicas=2 --batch-size=32
figure "sync, 2 replicas, global batch 128" --replicas=2 --batch-size=128
figure "async, 2 replicas, 32 per replica step" --replicas=2 --batch-size=64 --mode=async
echo "## scheduler responsiveness while replicas compute"
"$bench/responsiveness_bench"
echo "## coordinator + 2 node processes (1 replica and 1 store shard each) on loopback"
start_node 1
start_node 2
on_nodes="${addresses[0]},${addresses[1]}"
figure "sync, 2 nodes, global batch 32" --nodes="$on_nodes" --batch-size=32
figure "sync, 2 nodes, global batch 128" --nodes="$on_nodes" --batch-size=128
figure "async, 2 nodes, 32 per replica step" --nodes="$on_nodes" --batch-size=64 --mode=async
if [ -x "$bench/wire_bench" ]; then
  echo "## wire: 407 KB gradient round trip between two processes"
  "$bench/wire_bench"
fi
