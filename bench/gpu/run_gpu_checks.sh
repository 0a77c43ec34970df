#!/usr/bin/env bash
# The one script for a GPU machine (CUDA toolkit, CMake, Python with PyTorch,
# none of our Debian packages): builds the CUDA tests and the GPU bench with
# TROUPE_MODEL_ONLY, or takes them prebuilt, runs the tests, both benchmarks,
# and writes a summary.
# Usage: bench/gpu/run_gpu_checks.sh [--prebuilt[=DIR]] [DEPS_DIR] [OUT_DIR]
#   --prebuilt[=DIR]  run troupe_cuda_tests and troupe_gpu_train_bench from DIR
#             (default DEPS_DIR/prebuilt, as pack_deps.sh --prebuilt makes it;
#             or set TROUPE_GPU_PREBUILT=DIR) instead of configuring and
#             building; DIR/lib, when there, goes first in LD_LIBRARY_PATH
#   DEPS_DIR  what pack_deps.sh made (default .gpu-deps/); optional where the
#             machine has Eigen, Catch2 and zlib installed
#   OUT_DIR   logs and summary.md (default $OUT, else build-gpu/out)
# The tests read tests/data from $TROUPE_TEST_DATA_DIR, which this script sets
# (when unset) to DEPS_DIR/test-data if there, else to this checkout's tests/data.
# Exit status: the CUDA tests' (0 passed, 1 failed, 77 no usable GPU: then the
# benchmarks are skipped too).
set -uo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
prebuilt=${TROUPE_GPU_PREBUILT:-}
positional=()
for arg in "$@"; do
  case $arg in
    --prebuilt) prebuilt=default ;;
    --prebuilt=*) prebuilt=${arg#--prebuilt=} ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    -*) echo "unknown option $arg (see --help)" >&2; exit 2 ;;
    *) positional+=("$arg") ;;
  esac
done
deps_dir=${positional[0]:-$root/.gpu-deps}
[ -d "$deps_dir" ] && deps_dir=$(cd "$deps_dir" && pwd)
out=${positional[1]:-${OUT:-$root/build-gpu/out}}
build=${TROUPE_GPU_BUILD_DIR:-$root/build-gpu}
prefix=/tmp/troupe-gpu-deps
mkdir -p "$out"
out=$(cd "$out" && pwd)
summary=$out/summary.md
log() { echo "== $*" | tee -a "$out/steps.log"; }

if [ -n "$prebuilt" ]; then
  [ "$prebuilt" = default ] && prebuilt=$deps_dir/prebuilt
  for binary in troupe_cuda_tests troupe_gpu_train_bench; do
    [ -x "$prebuilt/$binary" ] || { echo "no executable $prebuilt/$binary (--prebuilt)" >&2; exit 1; }
  done
  prebuilt=$(cd "$prebuilt" && pwd)
  tests_binary=$prebuilt/troupe_cuda_tests
  bench_binary=$prebuilt/troupe_gpu_train_bench
  [ -d "$prebuilt/lib" ] && export LD_LIBRARY_PATH=$prebuilt/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
else
  tests_binary=$build/tests/cuda/troupe_cuda_tests
  bench_binary=$build/bench/gpu/troupe_gpu_train_bench
  if [ -f "$deps_dir/deps.tar.xz" ]; then
    rm -rf "$prefix" && mkdir -p "$prefix"
    tar -C "$prefix" -xJf "$deps_dir/deps.tar.xz" || { echo "cannot unpack deps"; exit 1; }
  fi
fi
if [ -z "${TROUPE_TEST_DATA_DIR:-}" ]; then
  if [ -d "$deps_dir/test-data" ]; then
    export TROUPE_TEST_DATA_DIR=$deps_dir/test-data
  else
    export TROUPE_TEST_DATA_DIR=$root/tests/data
  fi
fi
for candidate in "$deps_dir/fashion-mnist" /usr/share/datasets/fashion-mnist; do
  if ls "$candidate"/train-images-idx3-ubyte* >/dev/null 2>&1; then data_dir=$candidate; break; fi
done
data_note="full Fashion-MNIST ($data_dir)"
if [ -z "${data_dir:-}" ]; then
  data_dir=$TROUPE_TEST_DATA_DIR
  data_note="ONLY the test slice in $data_dir (no full Fashion-MNIST found): rates are not comparable"
fi

log "GPU"
if command -v nvidia-smi >/dev/null; then
  nvidia-smi -L 2>&1 | tee "$out/gpu.txt"
else
  echo "no nvidia-smi on this machine" | tee "$out/gpu.txt"
fi
if command -v nvcc >/dev/null; then nvcc --version | tail -2 | tee -a "$out/gpu.txt"; fi

if [ -n "$prebuilt" ]; then
  log "prebuilt binaries in $prebuilt (no configure, no build)"
  kernels=$tests_binary
else
  mkdir -p "$build"
  log "configure"
  generator=()
  command -v ninja >/dev/null && generator=(-G Ninja)
  cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
    -DTROUPE_MODEL_ONLY=ON -DTROUPE_TESTS=ON -DCMAKE_PREFIX_PATH="$prefix" \
    > "$out/configure.log" 2>&1 || { tail -40 "$out/configure.log"; exit 1; }
  grep -E "CUDA backend" "$out/configure.log"

  log "build"
  cmake --build "$build" -j "${TROUPE_GPU_JOBS:-$(nproc)}" --target troupe_cuda_tests troupe_gpu_train_bench \
    > "$out/build.log" 2>&1 || { grep -E "error|Error" "$out/build.log" | head -40; exit 1; }
  kernels=$build/model/backend/cuda/libtroupe_cuda.a
fi

log "kernel images in $(basename "$kernels")"
cuobjdump=$(command -v cuobjdump || echo "$(dirname "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)")/cuobjdump")
if [ -x "$cuobjdump" ]; then
  { "$cuobjdump" --list-elf "$kernels"; "$cuobjdump" --list-ptx "$kernels"; } 2>&1 | tee "$out/cuobjdump.txt"
else
  echo "no cuobjdump on this machine" | tee "$out/cuobjdump.txt"
fi

log "CUDA tests (test data: $TROUPE_TEST_DATA_DIR)"
"$tests_binary" 2>&1 | tee "$out/cuda_tests.log"
tests_rc=${PIPESTATUS[0]}
[ -z "$prebuilt" ] && (cd "$build" && ctest -R troupe_cuda_tests 2>&1 | tail -4)

if [ "$tests_rc" -eq 77 ]; then
  log "no usable GPU: the CUDA tests skipped; skipping the benchmarks too"
  {
    echo "# GPU checks, $(date -u +%Y-%m-%dT%H:%MZ)"
    echo
    echo "- GPU: none usable ($(head -1 "$out/gpu.txt"))"
    echo "- CUDA tests: exit 77, $(grep -E "SKIPPED" "$out/cuda_tests.log" | tail -1)"
    echo "- benchmarks: skipped"
  } > "$summary"
  cat "$summary"
  exit 77
fi

log "Troupe bench"
"$bench_binary" --data "$data_dir" 2>&1 | tee "$out/troupe_bench.log"
log "PyTorch bench"
PYTHONUNBUFFERED=1 python3 "$root/bench/gpu/torch_mlp.py" --data "$data_dir" 2>&1 \
  | tee "$out/torch_bench.log"
PYTHONUNBUFFERED=1 python3 "$root/bench/gpu/torch_mlp.py" --data "$data_dir" --fused 2>&1 \
  | tee -a "$out/torch_bench.log"

field() { # field TAG BATCH NAME: a value a RESULT line gave, or "-"
  grep -h "^RESULT $1 batch=$2 " "$out/troupe_bench.log" "$out/torch_bench.log" 2>/dev/null \
    | head -1 | sed -n "s/.* $3=\([0-9.]*\).*/\1/p" | grep . || echo "-"
}
ratio() { # ratio A B: A / B to one decimal, or "-"
  awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.1fx", a / b; else print "-" }'
}
{
  echo "# GPU checks, $(date -u +%Y-%m-%dT%H:%MZ)"
  echo
  echo "- GPU: $(head -1 "$out/gpu.txt")"
  echo "- data: $data_note"
  echo "- CUDA tests: exit $tests_rc; $(grep -E "test cases|All tests passed|SKIPPED" "$out/cuda_tests.log" | tail -1)"
  echo "- kernel images: $(grep -c "sm_90" "$out/cuobjdump.txt") sm_90 entries (ELF + PTX)"
  echo
  echo "784-128relu-10 with Adam, training loop only, samples/s (Troupe: median epoch"
  echo "of 2-5, each reshuffled on the device; PyTorch: one epoch after 50 warm-up steps):"
  echo
  echo "| batch | Troupe, CUDA graph | Troupe, op by op | PyTorch eager | PyTorch, fused Adam | graph / eager | Troupe test accuracy |"
  echo "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
  for batch in 32 128 1024; do
    graph=$(field troupe $batch samples_per_s)
    eager=$(field torch $batch samples_per_s)
    echo "| $batch | $graph | $(field troupe_unrecorded $batch samples_per_s) | $eager |" \
      "$(field torch_fused $batch samples_per_s) | $(ratio "$graph" "$eager") |" \
      "$(field troupe $batch test_accuracy) |"
  done
} > "$summary"
cat "$summary"
exit "$tests_rc"
