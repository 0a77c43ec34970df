#!/usr/bin/env bash
# How fast a sync run recovers from a node's death on loopback: three nodes
# with two replicas each, one killed (kill -9) once the first epoch line is
# out. For each run: from the kill to the coordinator's news of it
# (detection), from that news to the respawned replicas' orders (Troupe's
# own part, the metrics' respawn records), and whether the run ended with
# the checksum of one process running six replicas.
#   bench/respawn_bench.sh [repeats]   (after scripts/test.sh built build/)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$root/build/examples"
repeats="${1:-5}"
data="$root/tests/data"
for program in "$build/mnist" "$build/node"; do
  [ -x "$program" ] || { echo "missing $program: build first (scripts/test.sh)" >&2; exit 1; }
done
work="$(mktemp -d)"
nodes=()
cleanup() {
  for pid in "${nodes[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
# shellcheck source=bench/rates.sh
source "$root/bench/rates.sh"
run=(--data-dir="$data" --mode=sync --epochs=4 --batch-size=6 --seed=11 --progress=off)

addresses=()
start_node() { # start_node NAME: appends its pid to nodes, its HOST:PORT to addresses
  "$build/node" --port=0 > "$work/$1.log" 2>&1 &
  nodes+=($!)
  for _ in $(seq 100); do
    address="$(sed -n 's/^troupe node listening on \([^ ]*\) .*/\1/p' "$work/$1.log")"
    [ -n "$address" ] && { addresses+=("$address"); return; }
    sleep 0.1
  done
  echo "node $1 did not start" >&2; exit 1
}

"$build/mnist" "${run[@]}" --replicas=6 --metrics="$work/local.jsonl" > /dev/null
final_sum() { grep '"record":"final"' "$1" | sed -n 's/.*"params_fnv1a64":"\([0-9a-f]*\)".*/\1/p'; }
local_sum="$(final_sum "$work/local.jsonl")"
detect=() own=() same=0
for r in $(seq "$repeats"); do
  nodes=() addresses=()
  start_node a; start_node b; start_node c
  rm -f "$work/run.jsonl"
  "$build/mnist" "${run[@]}" --nodes="$(IFS=,; echo "${addresses[*]}")" --replicas-per-node=2 \
    --metrics="$work/run.jsonl" > "$work/run.log" 2>&1 &
  coordinator=$!
  until grep -q '"record":"epoch"' "$work/run.jsonl" 2>/dev/null; do sleep 0.02; done
  killed_at="$(date +%s.%N)"
  kill -9 "${nodes[2]}"
  wait "${nodes[2]}" 2>/dev/null || true
  wait "$coordinator" || { tail -3 "$work/run.log" >&2; exit 1; }
  for pid in "${nodes[@]:0:2}"; do kill "$pid"; wait "$pid" 2>/dev/null || true; done
  noticed="$(sed -n 's/.*"noticed_at":\([0-9.e+]*\).*/\1/p' "$work/run.jsonl" | sort -g | head -1)"
  took="$(sed -n 's/.*"milliseconds":\([0-9.e+-]*\).*/\1/p' "$work/run.jsonl" | sort -g | tail -1)"
  sum="$(final_sum "$work/run.jsonl")"
  detect+=("$(awk -v a="$killed_at" -v b="$noticed" 'BEGIN { printf "%.1f", (b - a) * 1000 }')")
  own+=("$(awk -v t="$took" 'BEGIN { printf "%.1f", t }')")
  [ "$sum" = "$local_sum" ] && same=$((same + 1))
  echo "run $r: detection ${detect[-1]} ms, respawn ${own[-1]} ms, checksum $sum"
done
echo "median detection (kill to the coordinator's news): $(printf "%s\n" "${detect[@]}" | median) ms"
echo "median respawn (news to both new replicas' orders): $(printf "%s\n" "${own[@]}" | median) ms"
echo "runs ending with one process's checksum $local_sum: $same of $repeats"
