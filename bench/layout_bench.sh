#!/usr/bin/env bash
# Where the store runs across nodes, on loopback: two nodes with one replica
# each, one epoch, sync and async at global batch 32 and 128, with the store
# in the coordinator ("coordinator": --store-nodes=here) against the default
# layout ("shards": one shard on each replica node); for sync also the default
# layout without its snapshots ("shards-unhealed", --on-replica-loss=abort: a
# node's death ends the run, nothing is kept to heal from). Runs alternate between the layouts so that a busy spell
# of the host hits them alike; each figure is the median of `repeats` runs,
# "paired" the median of each run's ratio to the coordinator layout's run
# just before it.
#   bench/layout_bench.sh [repeats]   (after scripts/test.sh built build/)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$root/build/examples"
repeats="${1:-5}"
data="${TROUPE_DATA_DIR:-/usr/share/datasets/fashion-mnist}"
# shellcheck source=bench/rates.sh
source "$root/bench/rates.sh"
# shellcheck source=bench/loopback_nodes.sh
source "$root/bench/loopback_nodes.sh"

start_node a
start_node b
on_nodes="--nodes=$(IFS=,; echo "${addresses[*]}")"

rate() { # rate OPTIONS...: one run's whole samples/s
  mnist_rate "$build/mnist" "$data" "$work" "$on_nodes" "$@" | cut -d. -f1
}

options_of() { # options_of LAYOUT: its mnist options
  case "$1" in
    coordinator) echo "--store-nodes=here" ;;
    shards) echo "" ;;
    shards-unhealed) echo "--on-replica-loss=abort" ;;
  esac
}

for mode in sync async; do
  layouts=(coordinator shards)
  [ "$mode" = sync ] && layouts+=(shards-unhealed)
  for batch in 32 128; do
    declare -A runs=()
    ratios=()
    for _ in $(seq "$repeats"); do
      for layout in "${layouts[@]}"; do
        # shellcheck disable=SC2046 # a layout is zero or one option
        runs[$layout]+="$(rate --mode="$mode" --batch-size="$batch" $(options_of "$layout")) "
      done
      read -ra here <<< "${runs[coordinator]}"
      read -ra shards <<< "${runs[shards]}"
      ratios+=("$(awk -v a="${shards[-1]}" -v b="${here[-1]}" 'BEGIN { printf "%.3f", a / b }')")
    done
    echo "$mode, global batch $batch, 2 nodes x 1 replica, $repeats runs each:"
    for layout in "${layouts[@]}"; do
      # shellcheck disable=SC2086 # the runs' figures, one word each
      median_rate="$(printf "%s\n" ${runs[$layout]} | median)"
      echo "  $layout ($(options_of "$layout")): median $median_rate samples/s (${runs[$layout]% })"
    done
    echo "  shards / coordinator, paired: $(printf "%s\n" "${ratios[@]}" | median)"
    unset runs
  done
done
