#!/usr/bin/env bash
# Two builds' mnist side by side: one-epoch runs alternating between them (so
# that a busy spell of the host hits both alike), and each build's median
# samples/s with every run's figure.
#   bench/compare_builds.sh OLD_MNIST NEW_MNIST REPEATS [MNIST OPTIONS...]
# e.g. bench/compare_builds.sh /tmp/old/build/examples/mnist build/examples/mnist 9 \
#        --mode=sync --replicas=2 --batch-size=32
# Data: $TROUPE_DATA_DIR, else /usr/share/datasets/fashion-mnist. With
# TROUPE_BASE_BENCH=build/bench/train_bench each repeat starts with its
# batch-32 rate, and each build's median ratio to the base of its repeat is
# printed too. TROUPE_OLD_OPTIONS and TROUPE_NEW_OPTIONS add options to one
# build's runs only (each build's own --nodes, when the wire protocols differ).
set -euo pipefail
[ $# -ge 3 ] || { sed -n '2,13p' "$0" >&2; exit 2; }
old=$1 new=$2 repeats=$3
shift 3
data="${TROUPE_DATA_DIR:-/usr/share/datasets/fashion-mnist}"
base="${TROUPE_BASE_BENCH:-}"
for program in "$old" "$new" ${base:+"$base"}; do
  [ -x "$program" ] || { echo "error: $program is not an executable" >&2; exit 2; }
done
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# shellcheck source=bench/rates.sh
source "$(dirname "${BASH_SOURCE[0]}")/rates.sh"
rate() { mnist_rate "$1" "$data" "$work" "${@:2}"; } # rate PROGRAM OPTIONS...
old_runs=() new_runs=() base_runs=()
for _ in $(seq "$repeats"); do
  [ -z "$base" ] || base_runs+=("$(train_bench_rate "$base" "$data")")
  # shellcheck disable=SC2086 # the per-build options split into words
  old_runs+=("$(rate "$old" "$@" ${TROUPE_OLD_OPTIONS:-})")
  # shellcheck disable=SC2086
  new_runs+=("$(rate "$new" "$@" ${TROUPE_NEW_OPTIONS:-})")
done
printf 'options: %s (old: %s, new: %s)\n' "$*" "${TROUPE_OLD_OPTIONS:-}" "${TROUPE_NEW_OPTIONS:-}"
printf '%-4s median %8.0f samples/s  (runs: %s)\n' old \
  "$(printf '%s\n' "${old_runs[@]}" | median)" "$(printf '%.0f ' "${old_runs[@]}")"
printf '%-4s median %8.0f samples/s  (runs: %s)\n' new \
  "$(printf '%s\n' "${new_runs[@]}" | median)" "$(printf '%.0f ' "${new_runs[@]}")"
if [ -n "$base" ]; then
  printf 'base median %8.0f samples/s  (runs: %s)\n' \
    "$(printf '%s\n' "${base_runs[@]}" | median)" "$(printf '%.0f ' "${base_runs[@]}")"
  for build in old new; do
    declare -n runs="${build}_runs"
    printf '%-4s median ratio to the base of its repeat: %.2f\n' "$build" \
      "$(paired_median "${base_runs[*]}" "${runs[*]}")"
  done
fi
