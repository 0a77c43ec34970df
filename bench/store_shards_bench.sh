#!/usr/bin/env bash
# The sharded store's figure on this machine: sync, 2 replicas, global batch
# 32, one epoch, with 1 and 2 store shards (and pinned), as a ratio to
# train_bench's single-replica rate at batch 32 measured in the same run;
# "paired" is the median of each run's ratio to the base run just before it.
# Two train_bench runs side by side show what two independent loops get from
# the host's two cores in the same minutes: the runtime's ceiling there.
#   bench/store_shards_bench.sh [repeats]   (after scripts/test.sh built build/)
# Runs alternate between the configurations so that a busy spell of the host
# hits them alike; each figure is the median of `repeats` runs (default 5).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$root/build"
repeats="${1:-5}"
data="${TROUPE_DATA_DIR:-/usr/share/datasets/fashion-mnist}"
for program in "$build/examples/mnist" "$build/bench/train_bench"; do
  [ -x "$program" ] || { echo "missing $program: build first (scripts/test.sh)" >&2; exit 1; }
done
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# shellcheck source=bench/rates.sh
source "$root/bench/rates.sh"

# Where the VM's two vCPUs sit changes the figure (docs/benchmarks.md): a
# cache line's round trip between them, ~80 ns when they share an L3.
round_trip() { "$build/bench/coherence_bench" --round-trip 2>/dev/null || echo "?"; }
round_trip_before="$(round_trip)"

configs=("--store-shards=1" "--store-shards=2" "--store-shards=2 --pin-cores")
declare -A runs details
base_runs=()
base_details=""
ceiling_runs=()
for _ in $(seq "$repeats"); do
  before="$(cpu_times)"
  base_runs+=("$(train_bench_rate "$build/bench/train_bench" "$data")")
  base_details+="${base_runs[-1]} ($(steal_percent "$before" "$(cpu_times)")% stolen), "
  ceiling_runs+=("$(side_by_side_rate "$build/bench/train_bench" "$data")")
  for config in "${configs[@]}"; do
    before="$(cpu_times)"
    # shellcheck disable=SC2086 # the config is a list of options
    "$build/examples/mnist" --data-dir="$data" --epochs=1 --replicas=2 --batch-size=32 \
      --metrics="$work/m.jsonl" $config >/dev/null
    rate="$(tail -n 1 "$work/m.jsonl" | sed 's/.*"samples_per_second":\([0-9]*\).*/\1/')"
    runs[$config]+="$rate "
    details[$config]+="$rate ($(steal_percent "$before" "$(cpu_times)")% stolen, $(round_trip) ns), "
  done
done
echo "# $(date -u +%F) on $(nproc) cores: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
base="$(printf '%s\n' "${base_runs[@]}" | median)"
printf '%-58s %8.0f samples/s\n    runs: %s\n' "train_bench, 1 replica, batch 32 (the base)" \
  "$base" "${base_details%, }"
ceiling="$(printf '%s\n' "${ceiling_runs[@]}" | median)"
printf '%-58s %8.0f samples/s  %.2fx base, paired %.2fx  (runs: %s)\n' \
  "2 train_bench side by side (the host's 2-core ceiling)" "$ceiling" \
  "$(awk -v v="$ceiling" -v b="$base" 'BEGIN {print v / b}')" \
  "$(paired_median "${base_runs[*]}" "${ceiling_runs[*]}")" "${ceiling_runs[*]}"
# shellcheck disable=SC2086 # runs[$config] is a list of numbers, split on purpose
for config in "${configs[@]}"; do
  value="$(printf '%s\n' ${runs[$config]} | median)"
  paired="$(paired_median "${base_runs[*]}" "${runs[$config]}")"
  printf '%-58s %8.0f samples/s  %.2fx base, paired %.2fx\n    runs: %s\n' \
    "mnist sync, 2 replicas, global batch 32, $config" "$value" \
    "$(awk -v v="$value" -v b="$base" 'BEGIN {print v / b}')" "$paired" \
    "${details[$config]%, }"
done
echo "# each run: samples/s (the share of CPU time the hypervisor stole during it, the whole"
echo "# train_bench program for the base; for mnist also the two cores' round trip just after it:"
echo "# coherence_bench --round-trip, ~80 ns when they share an L3);"
echo "# the round trip before the first run: $round_trip_before ns"
