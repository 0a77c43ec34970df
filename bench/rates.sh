# shellcheck shell=bash
# Helpers the 2-core comparison scripts source (bench/store_shards_bench.sh,
# bench/compare_builds.sh, ...): a median, train_bench's single-replica rate,
# one mnist run's rate and the median of paired ratios.

# median: the median of the numbers on stdin, one per line.
median() { sort -n | awk '{v[NR]=$1} END {if (NR) print v[int((NR+1)/2)]}'; }

# train_bench_rate PROGRAM DATA_DIR: one 1-epoch run's samples/s at batch 32.
train_bench_rate() {
  "$1" "$2" 1 | sed -n 's/^batch   32: *\([0-9]*\) samples.*/\1/p'
}

# mnist_rate PROGRAM DATA_DIR WORK_DIR OPTIONS...: one 1-epoch mnist run's
# samples/s from its final metrics record (its log and metrics in WORK_DIR).
mnist_rate() {
  "$1" --data-dir="$2" --epochs=1 --progress=off --metrics="$3/run.jsonl" "${@:4}" \
    > "$3/run.log" 2>&1 || { tail -3 "$3/run.log" >&2; return 1; }
  sed -n 's/.*"record":"final".*"samples_per_second":\([0-9.]*\).*/\1/p' "$3/run.jsonl"
}

# side_by_side_rate PROGRAM DATA_DIR: two train_bench runs started together,
# the sum of their batch-32 rates: what this host's two cores give two
# independent loops right now (on a VM they may share one physical core).
side_by_side_rate() {
  local first second
  first="$(mktemp)" second="$(mktemp)"
  train_bench_rate "$1" "$2" >"$first" &
  train_bench_rate "$1" "$2" >"$second"
  wait
  echo "$(($(cat "$first") + $(cat "$second")))"
  rm -f "$first" "$second"
}

# cpu_times: the machine's total and stolen CPU time so far (/proc/stat's
# first line, in clock ticks): steal is time the hypervisor ran something
# else while a vCPU of this VM was ready to run.
cpu_times() { awk '/^cpu / {t = 0; for (i = 2; i <= NF; i++) t += $i; print t, $9}' /proc/stat; }

# steal_percent "BEFORE" "AFTER": the share of CPU time stolen between two
# cpu_times readings.
steal_percent() {
  # shellcheck disable=SC2086 # each reading is two numbers
  printf '%s %s %s %s\n' $1 $2 | awk '{t = $3 - $1; printf "%.0f", (t > 0 ? 100 * ($4 - $2) / t : 0)}'
}

# paired_median "BASES" "RUNS": the median of RUNS[i] / BASES[i], each list
# space-separated; a busy spell of the host then slows both sides of a ratio.
paired_median() {
  # shellcheck disable=SC2086 # the lists split on purpose
  paste -d' ' <(printf '%s\n' $1) <(printf '%s\n' $2) | awk '{print $2 / $1}' | median
}
