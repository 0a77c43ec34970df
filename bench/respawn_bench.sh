#!/usr/bin/env bash
# How fast a sync run recovers from a node's death on loopback: three nodes
# with two replicas each, one killed (kill -9) once the first epoch record is
# out, in both layouts: the store in the coordinator ("coordinator", the
# node's replicas respawn) and a shard on each node (the default, "shards":
# the store heals from its snapshot and every replica respawns). For each
# run: from the kill to the coordinator's news of it (detection), from that
# news to the new replicas' orders (Troupe's own part: the metrics' respawn
# or store_heal records), and whether the run ended with the checksum of one
# process running six replicas.
#   bench/respawn_bench.sh [repeats]   (after scripts/test.sh built build/)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$root/build/examples"
repeats="${1:-5}"
data="$root/tests/data"
# shellcheck source=bench/rates.sh
source "$root/bench/rates.sh"
# shellcheck source=bench/loopback_nodes.sh
source "$root/bench/loopback_nodes.sh"
run=(--data-dir="$data" --mode=sync --epochs=4 --batch-size=6 --seed=11 --progress=off)

"$build/mnist" "${run[@]}" --replicas=6 --metrics="$work/local.jsonl" > /dev/null
final_sum() { grep '"record":"final"' "$1" | sed -n 's/.*"params_fnv1a64":"\([0-9a-f]*\)".*/\1/p'; }
local_sum="$(final_sum "$work/local.jsonl")"
declare -A detect own same
layouts=(coordinator shards)
for r in $(seq "$repeats"); do
  for layout in "${layouts[@]}"; do
    nodes=() addresses=()
    start_node a; start_node b; start_node c
    rm -f "$work/run.jsonl"
    placement=()
    [ "$layout" = coordinator ] && placement=(--store-nodes=here)
    "$build/mnist" "${run[@]}" --nodes="$(IFS=,; echo "${addresses[*]}")" --replicas-per-node=2 \
      "${placement[@]}" --metrics="$work/run.jsonl" > "$work/run.log" 2>&1 &
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
    detect[$layout]+="$(awk -v a="$killed_at" -v b="$noticed" 'BEGIN { printf "%.1f", (b - a) * 1000 }') "
    own[$layout]+="$(awk -v t="$took" 'BEGIN { printf "%.1f", t }') "
    [ "$sum" = "$local_sum" ] && same[$layout]=$((${same[$layout]:-0} + 1))
    echo "run $r, $layout: detection $(echo "${detect[$layout]}" | awk '{print $NF}') ms," \
         "recovery $(echo "${own[$layout]}" | awk '{print $NF}') ms, checksum $sum"
  done
done
for layout in "${layouts[@]}"; do
  # shellcheck disable=SC2086 # the runs' figures, one word each
  echo "$layout: median detection (kill to the coordinator's news)" \
       "$(printf "%s\n" ${detect[$layout]} | median) ms, median recovery (news to every new" \
       "replica's order) $(printf "%s\n" ${own[$layout]} | median) ms, runs ending with" \
       "one process's checksum $local_sum: ${same[$layout]:-0} of $repeats"
done
