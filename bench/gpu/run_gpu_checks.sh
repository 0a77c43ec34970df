#!/usr/bin/env bash
# The one script for a GPU machine (CUDA toolkit, CMake, Python with PyTorch,
# none of our Debian packages): builds the CUDA tests and the GPU bench with
# TROUPE_MODEL_ONLY, runs the tests, both benchmarks, and writes a summary.
# Usage: bench/gpu/run_gpu_checks.sh [DEPS_DIR] [OUT_DIR]
#   DEPS_DIR  what pack_deps.sh made (default .gpu-deps/); optional where the
#             machine has Eigen, Catch2, zlib and OpenBLAS installed
#   OUT_DIR   logs and summary.md (default $OUT, else build-gpu/out)
set -uo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
deps_dir=${1:-$root/.gpu-deps}
[ -d "$deps_dir" ] && deps_dir=$(cd "$deps_dir" && pwd)
out=${2:-${OUT:-$root/build-gpu/out}}
build=${TROUPE_GPU_BUILD_DIR:-$root/build-gpu}
prefix=/tmp/troupe-gpu-deps
mkdir -p "$out" "$build"
summary=$out/summary.md
log() { echo "== $*" | tee -a "$out/steps.log"; }

if [ -f "$deps_dir/deps.tar.xz" ]; then
  rm -rf "$prefix" && mkdir -p "$prefix"
  tar -C "$prefix" -xJf "$deps_dir/deps.tar.xz" || { echo "cannot unpack deps"; exit 1; }
fi
for candidate in "$deps_dir/fashion-mnist" /usr/share/datasets/fashion-mnist; do
  if ls "$candidate"/train-images-idx3-ubyte* >/dev/null 2>&1; then data_dir=$candidate; break; fi
done
data_note="full Fashion-MNIST ($data_dir)"
if [ -z "${data_dir:-}" ]; then
  data_dir=$root/tests/data
  data_note="ONLY the test slice in tests/data (no full Fashion-MNIST found): rates are not comparable"
fi

log "GPU"
nvidia-smi -L 2>&1 | tee "$out/gpu.txt"
nvcc --version | tail -2 | tee -a "$out/gpu.txt"

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

log "kernel images in libtroupe_cuda.a"
lib=$build/model/backend/cuda/libtroupe_cuda.a
cuobjdump=$(command -v cuobjdump || echo "$(dirname "$(command -v nvcc)")/cuobjdump")
{ "$cuobjdump" --list-elf "$lib"; "$cuobjdump" --list-ptx "$lib"; } 2>&1 | tee "$out/cuobjdump.txt"

log "CUDA tests"
"$build/tests/cuda/troupe_cuda_tests" 2>&1 | tee "$out/cuda_tests.log"
tests_rc=${PIPESTATUS[0]}
(cd "$build" && ctest -R troupe_cuda_tests 2>&1 | tail -4)

log "Troupe bench"
"$build/bench/gpu/troupe_gpu_train_bench" --data "$data_dir" 2>&1 | tee "$out/troupe_bench.log"
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
