#!/usr/bin/env bash
# Two node processes on loopback against the same run in one process: sync,
# 2 replicas, one epoch, at global batch 128 against one process's rate and
# at batch 32 against train_bench's single loop (its batch-32 rate), for
# each codec of $CODECS (default fp32 bf16 int8). Runs alternate; each
# figure is the median of `repeats` runs, each ratio the median of the
# ratios of runs side by side in time.
#   bench/loopback_bench.sh [repeats]   (after scripts/test.sh built build/)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$root/build/examples"
repeats="${1:-5}"
codecs=(${CODECS:-fp32 bf16 int8})
data="${TROUPE_DATA_DIR:-/usr/share/datasets/fashion-mnist}"
# shellcheck source=bench/rates.sh
source "$root/bench/rates.sh"
# shellcheck source=bench/loopback_nodes.sh
source "$root/bench/loopback_nodes.sh"

start_node a
start_node b
on_nodes="--nodes=$(IFS=,; echo "${addresses[*]}")"

rate() { # rate OPTIONS...: one run's whole samples/s
  mnist_rate "$build/mnist" "$data" "$work" --mode=sync --replicas=2 "$@" | cut -d. -f1
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }

declare -A figures=()
for _ in $(seq "$repeats"); do
  base32="$(train_bench_rate "$root/build/bench/train_bench" "$data")"
  figures[train_bench]+="$base32 "
  for codec in "${codecs[@]}"; do
    here="$(rate --batch-size=128 --wire="$codec")"
    nodes128="$(rate --batch-size=128 --wire="$codec" "$on_nodes")"
    nodes32="$(rate --batch-size=32 --wire="$codec" "$on_nodes")"
    figures[$codec here 128]+="$here "
    figures[$codec nodes 128]+="$nodes128 "
    figures[$codec nodes 32]+="$nodes32 "
    figures[$codec ratio 128]+="$(ratio "$nodes128" "$here") "
    figures[$codec ratio 32]+="$(ratio "$nodes32" "$base32") "
  done
done
med() { tr ' ' '\n' <<< "${figures[$1]}" | grep . | median; }
echo "sync, 2 replicas, one epoch, medians of $repeats:"
echo "  train_bench, batch 32 (the base): $(med train_bench) samples/s"
for codec in "${codecs[@]}"; do
  echo "  --wire=$codec: one process, batch 128: $(med "$codec here 128");" \
       "2 nodes, batch 128: $(med "$codec nodes 128") ($(med "$codec ratio 128")x one process);" \
       "2 nodes, batch 32: $(med "$codec nodes 32") ($(med "$codec ratio 32")x train_bench)"
done
