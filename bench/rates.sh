# shellcheck shell=bash
# Helpers the 2-core comparison scripts source (bench/store_shards_bench.sh,
# bench/compare_builds.sh): a median, train_bench's single-replica rate and
# the median of paired ratios.

# median: the median of the numbers on stdin, one per line.
median() { sort -n | awk '{v[NR]=$1} END {if (NR) print v[int((NR+1)/2)]}'; }

# train_bench_rate PROGRAM DATA_DIR: one 1-epoch run's samples/s at batch 32.
train_bench_rate() {
  "$1" "$2" 1 | sed -n 's/^batch   32: *\([0-9]*\) samples.*/\1/p'
}

# paired_median "BASES" "RUNS": the median of RUNS[i] / BASES[i], each list
# space-separated; a busy spell of the host then slows both sides of a ratio.
paired_median() {
  # shellcheck disable=SC2086 # the lists split on purpose
  paste -d' ' <(printf '%s\n' $1) <(printf '%s\n' $2) | awk '{print $2 / $1}' | median
}
