#!/usr/bin/env bash
# Test accuracy by --wire codec over seeds. For each seed (42, then 1, 2, ...)
# it trains the example 5 epochs at a global batch of 32 (sync, 2 replicas,
# 2 store shards) with each of fp32, bf16, fp16 and int8, then prints each
# codec's mean and spread and its paired difference to fp32 of the same seed:
# the mean, its standard error, the widest gaps, and how many seeds fall
# within 0.3 and 0.7 points. A sync run's accuracy is a pure function of its
# settings and the build, so no run is repeated and nothing is timed.
#   bench/codec_accuracy.sh [mlp|convnet] [seeds]   (default: mlp 20)
# after scripts/test.sh built build/; the data is $TROUPE_DATA_DIR, else
# Debian's Fashion-MNIST.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
model="${1:-mlp}"
seeds="${2:-20}"
data="${TROUPE_DATA_DIR:-/usr/share/datasets/fashion-mnist}"
case "$model" in
  mlp) example="$root/build/examples/mnist" ;;
  convnet) example="$root/build/examples/mnist_convnet" ;;
  *) echo "usage: $0 [mlp|convnet] [seeds]" >&2; exit 2 ;;
esac
[ -x "$example" ] || { echo "missing $example: build first (scripts/test.sh)" >&2; exit 1; }
[[ "$seeds" =~ ^[1-9][0-9]*$ ]] ||
  { echo "seeds must be a positive count, not '$seeds'" >&2; exit 2; }
codecs=(fp32 bf16 fp16 int8)
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

echo "$model, 5 epochs at batch 32, sync; $(lscpu | sed -n 's/^Model name: *//p')"
printf '%6s' seed; printf ' %8s' "${codecs[@]}"; echo
for ((n = 0; n < seeds; n++)); do
  seed=$((n == 0 ? 42 : n))
  printf '%6s' "$seed"
  for codec in "${codecs[@]}"; do
    "$example" --data-dir="$data" --epochs=5 --batch-size=32 --wire="$codec" --seed="$seed" \
      --progress=off >"$work/run.log" 2>&1 || { echo; tail -3 "$work/run.log" >&2; exit 1; }
    accuracy="$(sed -n 's/^Test accuracy: //p' "$work/run.log")"
    printf ' %8s' "$accuracy"
    echo "$seed $codec $accuracy" >>"$work/table"
  done
  echo
done

awk -v codecs="${codecs[*]}" '
  { acc[$1, $2] = $3; if (!($1 in seen)) { seen[$1] = 1; order[++seeds] = $1 } }
  END {
    n = split(codecs, c, " ")
    print "accuracy over " seeds " seeds; \"vs fp32\": the paired difference in points"
    printf "%-6s %7s %7s %7s %7s | %7s %5s %6s %6s %9s %9s\n", "codec", "mean", "sd", "min",
           "max", "vs fp32", "se", "min", "max", "within .3", "within .7"
    for (k = 1; k <= n; ++k) {
      sum = sq = 0; lo = 1; hi = 0; dsum = dsq = 0; dlo = 100; dhi = -100; w3 = w7 = 0
      for (i = 1; i <= seeds; ++i) {
        a = acc[order[i], c[k]]; sum += a; sq += a * a
        if (a < lo) lo = a
        if (a > hi) hi = a
        d = 100 * (a - acc[order[i], "fp32"]); dsum += d; dsq += d * d
        if (d < dlo) dlo = d
        if (d > dhi) dhi = d
        if (d >= -0.3 && d <= 0.3) ++w3
        if (d >= -0.7 && d <= 0.7) ++w7
      }
      mean = sum / seeds; sd = seeds > 1 ? sqrt((sq - seeds * mean * mean) / (seeds - 1)) : 0
      printf "%-6s %7.4f %7.4f %7.4f %7.4f", c[k], mean, sd, lo, hi
      if (c[k] == "fp32") { printf "\n"; continue }
      dm = dsum / seeds; dsd = seeds > 1 ? sqrt((dsq - seeds * dm * dm) / (seeds - 1)) : 0
      printf " | %+7.2f %5.2f %+6.2f %+6.2f %9s %9s\n", dm, dsd / sqrt(seeds), dlo, dhi,
             w3 "/" seeds, w7 "/" seeds
    }
  }' "$work/table"
