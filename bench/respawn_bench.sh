#!/usr/bin/env bash
# How fast a sync run recovers from a node's death on loopback: three nodes
# with two replicas each, one killed (kill -9) once the first epoch record is
# out, in both layouts: the store in the coordinator ("coordinator", the
# node's replicas respawn) and a shard on each node (the default, "shards":
# the store heals from its snapshot and every replica respawns). For each
# run: from the kill to the coordinator's news of it (detection), from that
# news to the new replicas' orders (Troupe's own part: the metrics' respawn
# or store_heal records), from the kill to the close of the round the
# recovery restarted from (the metrics' recovery records), whether the run
# ended with the checksum of one process running six replicas, and how much
# longer it took than the same run with no kill just before it, against the
# bound of detection plus recovery plus the rounds computed again.
# With SIGNAL STOP the node is frozen (SIGSTOP) instead, and noticed by the
# heartbeats.
#   bench/respawn_bench.sh [repeats] [KILL|STOP]   (after scripts/test.sh built build/)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$root/build/examples"
repeats="${1:-5}"
signal="${2:-KILL}"
case "$signal" in KILL | STOP) ;; *) echo "error: SIGNAL is KILL or STOP" >&2; exit 2 ;; esac
data="$root/tests/data"
# shellcheck source=bench/rates.sh
source "$root/bench/rates.sh"
# shellcheck source=bench/loopback_nodes.sh
source "$root/bench/loopback_nodes.sh"
run=(--data-dir="$data" --mode=sync --epochs=4 --batch-size=6 --seed=11 --progress=off)

"$build/mnist" "${run[@]}" --replicas=6 --metrics="$work/local.jsonl" > /dev/null
final_sum() { grep '"record":"final"' "$1" | sed -n 's/.*"params_fnv1a64":"\([0-9a-f]*\)".*/\1/p'; }
local_sum="$(final_sum "$work/local.jsonl")"
declare -A detect own closes same extra bound within
layouts=(coordinator shards)
# cluster_run LAYOUT KILL: one run on three fresh nodes, node c killed once
# the first epoch record is out when KILL is 1; sets run_seconds and
# killed_at, and leaves the metrics in $work/run.jsonl.
cluster_run() {
  nodes=() addresses=()
  start_node a; start_node b; start_node c
  rm -f "$work/run.jsonl"
  local placement=()
  [ "$1" = coordinator ] && placement=(--store-nodes=here)
  local started; started="$(date +%s.%N)"
  "$build/mnist" "${run[@]}" --nodes="$(IFS=,; echo "${addresses[*]}")" --replicas-per-node=2 \
    "${placement[@]}" --metrics="$work/run.jsonl" > "$work/run.log" 2>&1 &
  local coordinator=$!
  if [ "$2" = 1 ]; then
    local waited=0
    until grep -q '"record":"epoch"' "$work/run.jsonl" 2>/dev/null; do
      if ! kill -0 "$coordinator" 2>/dev/null || [ "$waited" -ge 3000 ]; then
        echo "the run ended, or wrote no epoch record within 60 s:" >&2
        tail -3 "$work/run.log" >&2
        exit 1
      fi
      sleep 0.02
      waited=$((waited + 1))
    done
    killed_at="$(date +%s.%N)"
    kill -s "$signal" "${nodes[2]}"
    [ "$signal" = STOP ] || wait "${nodes[2]}" 2>/dev/null || true
  fi
  wait "$coordinator" || { tail -3 "$work/run.log" >&2; exit 1; }
  run_seconds="$(awk -v a="$started" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')"
  for pid in "${nodes[@]}"; do
    kill -CONT "$pid" 2>/dev/null || true # a frozen node ends once it runs again
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
}
# The rounds a recovery computes again, at most: the open round when the
# store is in the coordinator, the rounds since the snapshot (--snapshot-every
# 100 by default) when the store heals.
declare -A recomputed=([coordinator]=1 [shards]=100)
rounds=1336 # 4 epochs of 334 rounds at global batch 6 over tests/data
for r in $(seq "$repeats"); do
  for layout in "${layouts[@]}"; do
    cluster_run "$layout" 0
    uninterrupted="$run_seconds"
    cluster_run "$layout" 1
    noticed="$(sed -n 's/.*"noticed_at":\([0-9.e+]*\).*/\1/p' "$work/run.jsonl" | sort -g | head -1)"
    took="$(sed -n 's/.*"milliseconds":\([0-9.e+-]*\).*/\1/p' "$work/run.jsonl" | sort -g | tail -1)"
    closed="$(sed -n 's/.*"closed_at":\([0-9.e+]*\).*/\1/p' "$work/run.jsonl" | sort -g | tail -1)"
    sum="$(final_sum "$work/run.jsonl")"
    to_round="$(awk -v a="$killed_at" -v b="$closed" 'BEGIN { printf "%.1f", (b - a) * 1000 }')"
    closes[$layout]+="$to_round "
    detected="$(awk -v a="$killed_at" -v b="$noticed" 'BEGIN { printf "%.1f", (b - a) * 1000 }')"
    detect[$layout]+="$detected "
    own[$layout]+="$(awk -v t="$took" 'BEGIN { printf "%.1f", t }') "
    # The bound: the uninterrupted run plus detection, Troupe's recovery and
    # the rounds computed again (at the uninterrupted run's time per round).
    more="$(awk -v k="$run_seconds" -v u="$uninterrupted" 'BEGIN { printf "%.0f", (k - u) * 1000 }')"
    allowed="$(awk -v d="$detected" -v t="$took" -v n="${recomputed[$layout]}" -v u="$uninterrupted" \
      -v R="$rounds" 'BEGIN { printf "%.0f", d + t + n * u * 1000 / R }')"
    extra[$layout]+="$more "
    bound[$layout]+="$allowed "
    [ "$more" -le "$allowed" ] && within[$layout]=$((${within[$layout]:-0} + 1))
    [ "$sum" = "$local_sum" ] && same[$layout]=$((${same[$layout]:-0} + 1))
    echo "run $r, $layout: detection $detected ms, recovery $took ms, kill to the next" \
         "closed round $to_round ms, checksum $sum," \
         "${more} ms longer than the uninterrupted run (bound $allowed ms)"
  done
done
for layout in "${layouts[@]}"; do
  # shellcheck disable=SC2086 # the runs' figures, one word each
  echo "$layout: median detection (kill to the coordinator's news)" \
       "$(printf "%s\n" ${detect[$layout]} | median) ms, median recovery (news to every new" \
       "replica's order) $(printf "%s\n" ${own[$layout]} | median) ms, median kill to the" \
       "next closed round $(printf "%s\n" ${closes[$layout]} | median) ms, runs ending with" \
       "one process's checksum $local_sum: ${same[$layout]:-0} of $repeats; median time over" \
       "the uninterrupted run $(printf "%s\n" ${extra[$layout]} | median) ms against a median" \
       "bound of $(printf "%s\n" ${bound[$layout]} | median) ms, within it: ${within[$layout]:-0}" \
       "of $repeats"
done
