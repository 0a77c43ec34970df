#!/usr/bin/env bash
# The Keras mnist_convnet against PyTorch on this machine: Troupe's
# examples/mnist_convnet with one replica on one core and sync with 2
# replicas, PyTorch (bench/torch_convnet.py, the same model) with 1 and 2
# threads, one epoch of Fashion-MNIST at batch 128 each, the four alternating
# run by run; each figure is the median of `repeats` runs (default 5). Then 3
# epochs once each of Troupe's 2 replicas and PyTorch's 2 threads, for the
# test accuracy. Samples/s count the training loop only; the single-core runs
# are confined to core 0 (taskset), so that neither side borrows the other.
#   bench/convnet_bench.sh [repeats]   (after scripts/test.sh built build/)
# PyTorch: $TROUPE_TORCH_PYTHON, else Debian's /usr/bin/python3 with its
# python3-torch (1.13), installed with apt when missing.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
repeats="${1:-5}"
data="${TROUPE_DATA_DIR:-/usr/share/datasets/fashion-mnist}"
convnet="$root/build/examples/mnist_convnet"
[ -x "$convnet" ] || { echo "missing $convnet: build first (scripts/test.sh)" >&2; exit 1; }
torch_python="${TROUPE_TORCH_PYTHON:-/usr/bin/python3}"
if ! "$torch_python" -c 'import torch' 2>/dev/null; then
  [ -z "${TROUPE_TORCH_PYTHON:-}" ] || { echo "$torch_python cannot import torch" >&2; exit 1; }
  # setup.sh installs whatever of Troupe's packages is missing; then PyTorch.
  # shellcheck source=scripts/setup.sh
  source "$root/scripts/setup.sh"
  troupe_packages=(python3-torch)
  troupe_install_missing
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# shellcheck source=bench/rates.sh
source "$root/bench/rates.sh" # median, paired_median, cpu_times, steal_percent

# The model's cost and the host's peak, for the share of it each run reaches.
mflop_per_sample=14.3 # forward + backward: the two convolutions' GEMMs and the dense layer
flop_per_cycle=32     # FP32 per core and cycle: two 256-bit FMAs (or one 512-bit)
mhz="$(awk -F: '/^cpu MHz/ {print $2 + 0; exit}' /proc/cpuinfo)"

# troupe_run REPLICAS EPOCHS [PREFIX...]: "samples/s test_accuracy" of one run,
# from the final metrics record.
troupe_run() {
  local replicas=$1 epochs=$2
  shift 2
  rm -f "$work/run.jsonl"
  "$@" "$convnet" --data-dir="$data" --replicas="$replicas" --epochs="$epochs" \
    --progress=off --metrics="$work/run.jsonl" >"$work/run.log" 2>&1 ||
    { tail -3 "$work/run.log" >&2; return 1; }
  local key values=()
  for key in samples_per_second test_accuracy; do
    values+=("$(sed -n "/\"record\":\"final\"/s/.*\"$key\":\([0-9.e+-]*\).*/\1/p" "$work/run.jsonl")")
  done
  echo "${values[*]}"
}

# torch_run THREADS EPOCHS [PREFIX...]: "samples/s test_accuracy" of one run.
torch_run() {
  local threads=$1 epochs=$2
  shift 2
  "$@" "$torch_python" "$root/bench/torch_convnet.py" --data="$data" --threads="$threads" \
    --epochs="$epochs" >"$work/run.log" 2>&1 || { tail -3 "$work/run.log" >&2; return 1; }
  sed -n 's/^RESULT .* samples_per_s=\([0-9.]*\) test_accuracy=\([0-9.]*\).*/\1 \2/p' \
    "$work/run.log"
}

labels=(torch_1 troupe_1 torch_2 troupe_2)
declare -A command=(
  [torch_1]="torch_run 1 1 taskset -c 0" [troupe_1]="troupe_run 1 1 taskset -c 0"
  [torch_2]="torch_run 2 1" [troupe_2]="troupe_run 2 1")
declare -A title=(
  [torch_1]="PyTorch, 1 thread (core 0)" [troupe_1]="Troupe, 1 replica (core 0)"
  [torch_2]="PyTorch, 2 threads" [troupe_2]="Troupe, sync, 2 replicas")
declare -A cores=([torch_1]=1 [troupe_1]=1 [torch_2]=2 [troupe_2]=2)
declare -A rates accuracies details

echo "# $(date -u +%F) on $(nproc) cores: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs);" \
  "cpu MHz $mhz; load $(cut -d' ' -f1-3 /proc/loadavg);" \
  "torch $("$torch_python" -c 'import torch; print(torch.__version__)')"
started=$SECONDS
for _ in $(seq "$repeats"); do
  for label in "${labels[@]}"; do
    before="$(cpu_times)"
    result="$(${command[$label]})"
    read -r rate accuracy <<<"$result"
    rates[$label]+="$rate "
    accuracies[$label]+="$accuracy "
    details[$label]+="$(printf '%.0f' "$rate") ($(steal_percent "$before" "$(cpu_times)")% stolen), "
  done
done

# shellcheck disable=SC2086 # rates[...] and accuracies[...] are lists, split on purpose
figure() { printf '%s\n' ${rates[$1]} | median; }
echo
echo "One epoch of Fashion-MNIST, batch 128, medians of $repeats runs (samples/s, training loop only):"
echo
echo "| run | samples/s | test accuracy | of the physical limit |"
echo "|---|---:|---:|---:|"
for label in "${labels[@]}"; do
  rate="$(figure "$label")"
  # shellcheck disable=SC2086
  accuracy="$(printf '%s\n' ${accuracies[$label]} | median)"
  printf '| %s | %.0f | %.4f | %.1f %% |\n' "${title[$label]}" "$rate" "$accuracy" \
    "$(awk -v r="$rate" -v m="$mflop_per_sample" -v c="${cores[$label]}" -v f="$flop_per_cycle" \
      -v hz="$mhz" 'BEGIN {print 100 * r * m / (c * f * hz)}')"
done
echo
for label in "${labels[@]}"; do echo "runs, ${title[$label]}: ${details[$label]%, }"; done
echo
# ratio TROUPE TORCH TARGET: the ratio of medians, the paired one and the verdict.
ratio() {
  local value
  value="$(awk -v a="$(figure "$1")" -v b="$(figure "$2")" 'BEGIN {printf "%.2f", a / b}')"
  printf '%s / %s: %sx (paired %.2fx); target >= %sx: %s\n' "${title[$1]}" "${title[$2]}" \
    "$value" "$(paired_median "${rates[$2]}" "${rates[$1]}")" "$3" \
    "$(awk -v v="$value" -v t="$3" 'BEGIN {print (v >= t ? "met" : "not met")}')"
}
ratio troupe_1 torch_1 1.5
ratio troupe_2 torch_2 2.5
printf 'physical limit: %s MFLOP per sample (forward + backward) at %s FP32 FLOP per cycle and core\n' \
  "$mflop_per_sample" "$flop_per_cycle"
printf '  x %s MHz (/proc/cpuinfo "cpu MHz") = %.0f samples/s per core\n' "$mhz" \
  "$(awk -v m="$mflop_per_sample" -v f="$flop_per_cycle" -v hz="$mhz" 'BEGIN {print f * hz / m}')"
echo "one-epoch runs took $((SECONDS - started)) s"

echo
echo "Three epochs, once each:"
result="$(troupe_run 2 3)"
read -r troupe_rate troupe_accuracy <<<"$result"
result="$(torch_run 2 3)"
read -r torch_rate torch_accuracy <<<"$result"
printf '| %s | %.0f samples/s | test accuracy %.4f |\n' "${title[troupe_2]}" "$troupe_rate" \
  "$troupe_accuracy"
printf '| %s | %.0f samples/s | test accuracy %.4f |\n' "${title[torch_2]}" "$torch_rate" \
  "$torch_accuracy"
awk -v a="$troupe_accuracy" -v b="$torch_accuracy" 'BEGIN {
  d = 100 * (a - b)
  verdict = d > 1 ? "not met (Troupe higher)" : d < -1 ? "not met (Troupe lower)" : "met"
  printf "Troupe - PyTorch after 3 epochs: %+.2f points; target within 1 point: %s\n", d, verdict
}'
echo "all runs took $((SECONDS - started)) s; load $(cut -d' ' -f1-3 /proc/loadavg)"
