#!/usr/bin/env bash
# Troupe across a real link, not loopback: the coordinator and two nodes in
# three network namespaces joined by a bridge, each namespace's egress
# limited to 1 Gbit/s (tc tbf), sync at global batch 128 (or $BATCH), one
# epoch of Fashion-MNIST. Each configuration of $LINK_RUNS (NAME=OPTIONS
# entries separated by ";", OPTIONS as mnist takes them; by default the
# store in the coordinator, the default layout of a shard on each node, and
# that layout with bf16 and int8 on the wire) against, with
# TROUPE_TORCH_PYTHON naming a Python that has torch, PyTorch DDP (gloo, its
# two ranks in the nodes' namespaces, bench/ddp_mlp.py) as the peer. Runs
# alternate; each figure is the median of `repeats` runs. Last, each run's
# link limit: what a node sends and receives per round (a push of half the
# gradient, an answer of half the parameters, in the codec's width) on a
# 1 Gbit/s link, the two one after the other; answers coded against the
# replica's version and pushes with their zeros as a mask (docs/distributed.md)
# at the shares of their whole sizes the run's codings took.
#   bench/link_bench.sh [repeats]   (as root, after scripts/test.sh built build/)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$root/build/examples"
repeats="${1:-5}"
batch="${BATCH:-128}"
data="${TROUPE_DATA_DIR:-/usr/share/datasets/fashion-mnist}"
torch_python="${TROUPE_TORCH_PYTHON:-}"
for program in "$build/mnist" "$build/node"; do
  [ -x "$program" ] || { echo "missing $program: build first (scripts/test.sh)" >&2; exit 1; }
done
[ "$(id -u)" -eq 0 ] || { echo "network namespaces need root" >&2; exit 1; }
# shellcheck source=bench/rates.sh
source "$root/bench/rates.sh"

prefix="trl$$"
bridge="${prefix}br"
spaces=("${prefix}c" "${prefix}1" "${prefix}2")
ips=(10.78.0.1 10.78.0.2 10.78.0.3)
work="$(mktemp -d)"
nodes=()
cleanup() {
  for pid in "${nodes[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${nodes[@]}"; do wait "$pid" 2>/dev/null || true; done
  for space in "${spaces[@]}"; do ip netns del "$space" 2>/dev/null || true; done
  ip link del "$bridge" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

ip link add "$bridge" type bridge
ip link set "$bridge" up
for i in 0 1 2; do
  space="${spaces[$i]}"
  ip netns add "$space"
  ip link add "${prefix}h$i" type veth peer name eth0 netns "$space"
  ip link set "${prefix}h$i" master "$bridge" up
  ip -n "$space" addr add "${ips[$i]}/24" dev eth0
  ip -n "$space" link set eth0 up
  ip -n "$space" link set lo up
  ip netns exec "$space" tc qdisc add dev eth0 root tbf rate 1gbit burst 256kb latency 20ms
done
in_space() { local space="$1"; shift; ip netns exec "$space" "$@"; }

for i in 1 2; do
  in_space "${spaces[$i]}" "$build/node" --bind="${ips[$i]}" --port=4001 > "$work/node$i.log" 2>&1 &
  nodes+=($!)
done
for i in 1 2; do
  for _ in $(seq 100); do grep -q "listening on" "$work/node$i.log" && break; sleep 0.1; done
done
on_nodes="--nodes=${ips[1]}:4001,${ips[2]}:4001"

troupe_rate() { # troupe_rate OPTIONS...: one run's samples/s from its final metrics record
  in_space "${spaces[0]}" "$build/mnist" --data-dir="$data" --epochs=1 --progress=off \
    --mode=sync --batch-size="$batch" "$on_nodes" --metrics="$work/run.jsonl" "$@" \
    > "$work/run.log" 2>&1 || { tail -3 "$work/run.log" >&2; return 1; }
  sed -n 's/.*"record":"final".*"samples_per_second":\([0-9]*\).*/\1/p' "$work/run.jsonl"
}
coded_share() { # coded_share KIND (delta_answer, masked_push): the last run's coded
  # bytes of that kind over their whole bytes; 1 without codes
  local coded whole
  coded="$(grep '"record":"epoch"' "$work/run.jsonl" | sed -n "s/.*\"$1_bytes\":\([0-9]*\).*/\1/p")"
  whole="$(grep '"record":"epoch"' "$work/run.jsonl" \
    | sed -n "s/.*\"$1_whole_bytes\":\([0-9]*\).*/\1/p")"
  awk -v c="${coded:-0}" -v w="${whole:-0}" 'BEGIN { printf "%.4f", (w > 0 ? c / w : 1) }'
}
ddp_rate() { # one DDP run's samples/s (rank 0's)
  in_space "${spaces[2]}" env GLOO_SOCKET_IFNAME=eth0 "$torch_python" "$root/bench/ddp_mlp.py" 1 "${ips[1]}" "$data" \
    "$batch" > "$work/ddp1.log" 2>&1 &
  local second=$!
  in_space "${spaces[1]}" env GLOO_SOCKET_IFNAME=eth0 "$torch_python" "$root/bench/ddp_mlp.py" 0 "${ips[1]}" "$data" \
    "$batch" > "$work/ddp0.log" 2>&1 || { tail -3 "$work/ddp0.log" >&2; return 1; }
  wait "$second"
  tail -1 "$work/ddp0.log"
}

runs="${LINK_RUNS:-store in the coordinator=--store-nodes=here;default layout=;default layout, bf16=--wire=bf16;default layout, int8=--wire=int8}"
IFS=';' read -r -a configs <<< "$runs"
declare -A rates=()
declare -A shares=() push_shares=() parameters=()
ddp=()
for _ in $(seq "$repeats"); do
  line=""
  for config in "${configs[@]}"; do
    name="${config%%=*}"
    read -r -a options <<< "${config#*=}"
    rate="$(troupe_rate "${options[@]}")"
    rates[$name]+="$rate "
    shares[$name]="$(coded_share delta_answer)"
    push_shares[$name]="$(coded_share masked_push)"
    parameters[$name]="$(grep '"record":"final"' "$work/run.jsonl" \
      | sed -n 's/.*"parameters":\([0-9]*\).*/\1/p')"
    line+="$name $rate, "
  done
  [ -n "$torch_python" ] && ddp+=("$(ddp_rate)") && line+="DDP ${ddp[-1]}"
  echo "${line%, }"
done
ddp_median=""
[ ${#ddp[@]} -gt 0 ] && ddp_median="$(printf "%s\n" "${ddp[@]}" | median)"
echo "sync, global batch $batch, 1 Gbit/s egress per namespace, medians of $repeats:"
for config in "${configs[@]}"; do
  name="${config%%=*}"
  got="$(tr ' ' '\n' <<< "${rates[$name]}" | grep . | median)"
  # Bytes per value each way: the push's and the answer's (int8: a scale
  # per 256 values; its answers travel as bf16).
  case "${config#*=}" in
    *--wire=bf16*|*--wire=fp16*) push=2; answer=2 ;;
    *--wire=int8*) push=1.015625; answer=2 ;;
    *) push=4; answer=4 ;;
  esac
  awk -v name="$name" -v got="$got" -v ddp="$ddp_median" -v p="${parameters[$name]}" -v b="$batch" \
      -v push="$push" -v answer="$answer" -v share="${shares[$name]}" \
      -v push_share="${push_shares[$name]}" \
      -v options="${config#*=}" 'BEGIN {
    bytes = p / 2 * (push * push_share + answer * share); limit = 125e6 / bytes * b
    printf "  %s: %.0f samples/s", name, got
    if (ddp != "") printf " = %.2fx DDP", got / ddp
    if (index(options, "store-nodes=here") == 0)
      printf "; link limit %.0f (%.0f bytes a round each way and back", limit, bytes
    if (share < 1) printf ", answers coded to %.1f %%", 100 * share
    if (push_share < 1) printf ", pushes masked to %.1f %%", 100 * push_share
    if (index(options, "store-nodes=here") == 0)
      printf "), %.0f %% of it", 100 * got / limit
    printf "\n" }'
done
[ -n "$ddp_median" ] && echo "  PyTorch DDP (gloo): $ddp_median samples/s"
exit 0
