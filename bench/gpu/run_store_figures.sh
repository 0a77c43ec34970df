#!/usr/bin/env bash
# Every GPU and 16-core figure of the sharded store in one run, from binaries
# built elsewhere (pack_deps.sh --prebuilt), building nothing: about 5 minutes
# (more with the convnet's runs) on a GPU machine with 16 cores, CUDA and
# PyTorch (written for one H200).
# Usage: bench/gpu/run_store_figures.sh --prebuilt=DIR [OUT_DIR]
#   DIR      what pack_deps.sh --prebuilt made (e.g. .gpu-deps): DIR/prebuilt/
#            {mnist,train_bench} and DIR/prebuilt/lib (a lib/NAME.xz is
#            unpacked to a temporary folder), DIR/fashion-mnist
#   OUT_DIR  each run's log, figures.txt (this output) and torch_graph.py
#            (default $OUT/figures when $OUT is set, else /tmp/troupe-figures.*)
# Figures, each the median of 3 one-epoch runs on Fashion-MNIST (60 000
# samples), training loop only, printed as `figure: LABEL VALUE samples/s`
# after the exact command:
#   (a) train_bench at batch 32: one replica, no actors (the ratios' base)
#   (b) mnist --devices=cpu: sync 14 replicas global 448 and 1792 (32 and 128
#       per replica), async 14 replicas --batch-size=448 (32 per push), sync 8
#       replicas global 256, sync 14 replicas global 448 with 4 store shards
#       and with CAF's work-stealing scheduler;
#       each with the replicas' wait % and its ratio to (a)
#   (c) mnist on cuda:0: sync 1 replica batch 32, sync 2 replicas global 64,
#       async 2 replicas --batch-size=64, each with the store's shards on the
#       host and again on the GPU (--store-device=cuda:0); before them the
#       device store's CUDA tests (troupe_cuda_tests "[store]", when packed)
#   (d) the Keras MNIST convnet (CONVNET below) in mnist --model=..., sync 1
#       replica batch 128, on cuda:0 and on the CPU, each one run by default
#       (TROUPE_FIGURES_CONVNET_REPEATS) of up to TROUPE_FIGURES_CONVNET_TIMEOUT_S
#       (180 s); before them the layers' CUDA tests (troupe_cuda_tests "[layers]")
#   (e) PyTorch on the same GPU at batch 32: bench/gpu/torch_mlp.py eager and
#       fused Adam, and a whole-step CUDA graph (this script's torch_graph.py)
# Without a GPU (no nvidia-smi or no device) (c), (e) and (d)'s GPU part print
# "skipped: ...".
# Environment: TROUPE_FIGURES_SMOKE=1 runs (b) with 2 replicas (a dry run on a
# small machine); TROUPE_FIGURES_REPEATS (3); TROUPE_FIGURES_BUDGET_S (240 s: no
# run starts after it; a figure gets fewer runs, never none, past its share);
# TROUPE_FIGURES_RUN_TIMEOUT_S (60, per run); TROUPE_DATA_DIR (else
# DIR/fashion-mnist, else /usr/share/datasets/fashion-mnist).
# Exit status: 0 every figure it tried has a value, 1 some run failed or a
# figure got no run within TROUPE_FIGURES_BUDGET_S (or no PyTorch with a GPU),
# 2 unusable setup (no DIR, no binary, no data, a library that does not load).
set -uo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
pack=
out_dir=
for arg in "$@"; do
  case $arg in
    --prebuilt=*) pack=${arg#--prebuilt=} ;;
    -h|--help) sed -n '2,40p' "$0"; exit 0 ;;
    -*) echo "error: unknown option $arg (see --help)" >&2; exit 2 ;;
    *) out_dir=$arg ;;
  esac
done
fail_setup() { echo "error: $*" >&2; exit 2; }

[ -n "$pack" ] || fail_setup "--prebuilt=DIR is required (a folder made by bench/gpu/pack_deps.sh --prebuilt=BUILD_DIR)"
[ -d "$pack" ] || fail_setup "no folder $pack (--prebuilt): make it with bench/gpu/pack_deps.sh --prebuilt=BUILD_DIR and copy it here"
pack=$(cd "$pack" && pwd)
bin=$pack/prebuilt
[ -d "$bin" ] || fail_setup "no $bin: $pack was packed without --prebuilt=BUILD_DIR"
mnist=$bin/mnist
train_bench=$bin/train_bench
for binary in "$mnist" "$train_bench"; do
  [ -x "$binary" ] || fail_setup "no executable $binary: repack with bench/gpu/pack_deps.sh --prebuilt=BUILD_DIR (a full build, not TROUPE_MODEL_ONLY)"
done

smoke=${TROUPE_FIGURES_SMOKE:-}
repeats=${TROUPE_FIGURES_REPEATS:-3}
budget=${TROUPE_FIGURES_BUDGET_S:-240}
run_timeout=${TROUPE_FIGURES_RUN_TIMEOUT_S:-60}
if [ -z "$out_dir" ]; then
  if [ -n "${OUT:-}" ]; then out_dir=$OUT/figures; else out_dir=$(mktemp -d /tmp/troupe-figures.XXXXXX); fi
fi
mkdir -p "$out_dir" || fail_setup "cannot make $out_dir"
out_dir=$(cd "$out_dir" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
exec > >(tee "$out_dir/figures.txt") 2>&1
start=$SECONDS
status=0

# --- data -------------------------------------------------------------------
data=
for candidate in ${TROUPE_DATA_DIR:+"$TROUPE_DATA_DIR"} "$pack/fashion-mnist" /usr/share/datasets/fashion-mnist; do
  if ls "$candidate"/train-images-idx3-ubyte* "$candidate"/t10k-labels-idx1-ubyte* >/dev/null 2>&1; then
    data=$candidate; break
  fi
done
[ -n "$data" ] || fail_setup "no Fashion-MNIST in $pack/fashion-mnist (pack_deps.sh copies it when the packing machine has it) nor /usr/share/datasets/fashion-mnist"

# --- libraries ----------------------------------------------------------------
libpath=()
[ -d "$bin/lib" ] && libpath+=("$bin/lib")
for packed in "$bin"/lib/*.xz; do
  [ -e "$packed" ] || continue
  mkdir -p "$work/lib"
  target=$work/lib/$(basename "${packed%.xz}")
  if command -v xz >/dev/null; then
    xz -dc "$packed" > "$target" || fail_setup "cannot unpack $packed"
  else
    python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"))' \
      "$packed" "$target" || fail_setup "cannot unpack $packed (no xz, and python3's lzma failed)"
  fi
  echo "unpacked: $(basename "$packed") -> $target"
done
[ -d "$work/lib" ] && libpath+=("$work/lib")

# CUDA's runtime and cuBLAS come from this machine (they must match its
# driver): the toolkit's folders first, then PyTorch's pip-installed nvidia/*.
cuda_candidates=()
for dir in ${CUDA_HOME:+"$CUDA_HOME/lib64"} ${CUDA_HOME:+"$CUDA_HOME/lib"} /usr/local/cuda/lib64 /usr/local/cuda/lib \
           /usr/local/cuda/targets/x86_64-linux/lib $(ls -d /usr/local/cuda-*/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib 2>/dev/null | sort -rV); do
  [ -d "$dir" ] || continue
  case " ${cuda_candidates[*]} " in *" $dir "*) ;; *) cuda_candidates+=("$dir") ;; esac
done
if command -v python3 >/dev/null; then
  while read -r dir; do [ -n "$dir" ] && cuda_candidates+=("$dir"); done < <(python3 - 2>/dev/null <<'EOF'
import glob, os, site, sys
roots = []
for get in (site.getsitepackages, lambda: [site.getusersitepackages()]):
    try:
        roots += list(get())
    except Exception:
        pass
roots += [p for p in sys.path if p.endswith(("site-packages", "dist-packages"))]
try:
    import nvidia
    roots += [os.path.dirname(p) for p in nvidia.__path__]
except Exception:
    pass
seen = set()
for root in roots:
    for lib in sorted(glob.glob(os.path.join(root, "nvidia", "*", "lib"))):
        lib = os.path.realpath(lib)
        if lib not in seen:
            seen.add(lib)
            print(lib)
EOF
)
fi
# The CUDA module (libtroupe_cuda), which libtroupe loads for cuda:N, links them.
cuda_module=$(ls "$bin"/lib/libtroupe_cuda.so* 2>/dev/null | head -1)
cuda_sonames=$(LD_LIBRARY_PATH=$(IFS=:; echo "${libpath[*]}") ldd "$mnist" "$train_bench" $cuda_module 2>/dev/null \
  | awk '$1 ~ /^libcu(dart|blas|blasLt)\.so/ { print $1 }' | sort -u | tr '\n' ' ')
echo "CUDA libraries the binaries load: ${cuda_sonames:-none}"
echo "searched: ${cuda_candidates[*]:-(no CUDA folders)}"
for soname in $cuda_sonames; do
  found=
  for dir in "${cuda_candidates[@]}"; do
    if [ -e "$dir/$soname" ]; then
      found=$dir
      case " ${libpath[*]} " in *" $dir "*) ;; *) libpath+=("$dir") ;; esac
      break
    fi
  done
  echo "  $soname -> ${found:-not in those folders (left to the system loader)}"
done
LD_LIBRARY_PATH=$(IFS=:; echo "${libpath[*]}")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export LD_LIBRARY_PATH
echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
for binary in "$mnist" "$train_bench"; do
  missing=$(ldd "$binary" 2>&1 | awk '/not found/ { print $1 }' | tr '\n' ' ')
  [ -z "$missing" ] || fail_setup "$(basename "$binary") cannot load: $missing(pack them with pack_deps.sh, or install CUDA's runtime and cuBLAS)"
done

# --- the machine ----------------------------------------------------------------
cores=$(nproc)
gpu=
if command -v nvidia-smi >/dev/null && nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
  gpu=$(nvidia-smi -L | head -1)
fi
if [ -n "$smoke" ]; then big=2; mid=1; else big=14; mid=8; fi
echo "# $(date -u +%FT%TZ) on $cores cores: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# $(ldd --version 2>&1 | head -1); GPU: ${gpu:-none}"
echo "# data: $data; repeats: $repeats; no run starts after ${budget}s; logs: $out_dir"
[ -n "$smoke" ] && echo "# SMOKE (TROUPE_FIGURES_SMOKE): the CPU figures use $big and $mid replicas instead of 14 and 8; not the 16-core figures"
[ -z "$smoke" ] && [ "$cores" -lt 16 ] && echo "# note: $cores cores, fewer than the 16 the CPU figures assume"

# --- helpers --------------------------------------------------------------------
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2fx", a / b; else print "-" }'; }
section_deadline=$((start + budget))
section() { # section TITLE PERCENT: the runs after each figure's first stop at PERCENT of the time limit
  section_deadline=$((start + budget * $2 / 100))
  echo
  echo "## $1"
}
# may_run RUNS_SO_FAR LAST_SECONDS: whether one more run fits. A figure's first
# run only needs the whole time limit not to be spent; later ones its section's share.
may_run() {
  if [ "$1" -eq 0 ]; then
    [ "$SECONDS" -lt $((start + budget)) ]
  else
    [ $((SECONDS + $2)) -le "$section_deadline" ]
  fi
}
# run_repeats LABEL PARSER CMD...: runs CMD up to $repeats times, each into
# OUT_DIR/LABEL.N.log, with @RUN@ in an argument replaced by OUT_DIR/LABEL.N
# (the command printed is run 1's); PARSER LOG RUN prints the run's samples/s
# (empty: the run failed). Leaves the values in $values, their logs in $run_logs.
run_repeats() {
  local label=$1 parser=$2; shift 2
  values=(); run_logs=(); not_run=
  local i last=0 begin rc value log arg run_cmd
  printf 'command:'
  for arg in "$@"; do printf ' %q' "${arg//@RUN@/$out_dir/$label.1}"; done
  case "$*" in *@RUN@*) echo "  (run n: $label.n.*)" ;; *) echo ;; esac
  for ((i = 1; i <= repeats; i++)); do
    if ! may_run "${#values[@]}" "$last"; then
      echo "  (time limit reached: $((i - 1)) of $repeats runs)"
      if [ "${#values[@]}" -eq 0 ]; then not_run="not run (time limit reached)"; status=1; fi
      break
    fi
    log=$out_dir/$label.$i.log
    run_cmd=()
    for arg in "$@"; do run_cmd+=("${arg//@RUN@/$out_dir/$label.$i}"); done
    begin=$SECONDS
    timeout -k 5 "$run_timeout" "${run_cmd[@]}" > "$log" 2>&1
    rc=$?
    last=$((SECONDS - begin))
    value=
    [ "$rc" -eq 0 ] && value=$("$parser" "$log" "$out_dir/$label.$i")
    if [ -z "$value" ]; then
      echo "  run $i failed (exit $rc$([ "$rc" -eq 124 ] && echo ", over ${run_timeout}s")); last lines of $log:"
      tail -n 4 "$log" | sed 's/^/    /'
      status=1
      break
    fi
    values+=("$value")
    run_logs+=("$log")
  done
}
runs() { printf '%.0f ' "$@" | sed 's/ $//'; }
mnist_rate() { # mnist_rate LOG RUN: the final metrics record's samples_per_second
  grep -h '"record":"final"' "$2.jsonl" 2>/dev/null | tail -1 \
    | sed -n 's/.*"samples_per_second":\([0-9.eE+-]*\).*/\1/p'
}
mnist_wait() { # mnist_wait LOG: the replicas' wait % from the epoch line
  sed -n 's/.*replicas: compute [0-9.]*% wait \([0-9.]*\)%.*/\1/p' "$1" | tail -1
}
# mnist_figure LABEL ARGS...: one figure of the actor runtime, with the wait %
# and the ratio to train_bench's batch 32; the median also lands in rate_LABEL.
mnist_figure() {
  local label=$1; shift
  run_repeats "$label" mnist_rate "$mnist" --epochs=1 --data-dir="$data" "$@" --metrics=@RUN@.jsonl
  if [ "${#values[@]}" -eq 0 ]; then echo "figure: $label ${not_run:-failed}"; return; fi
  local waits=() log rate wait
  for log in "${run_logs[@]}"; do waits+=("$(mnist_wait "$log")"); done
  rate=$(printf '%s\n' "${values[@]}" | median)
  wait=$(printf '%s\n' "${waits[@]}" | grep . | median)
  printf 'figure: %s %.0f samples/s  (wait %s%%; %s train_bench b32; runs: %s; wait %% per run: %s)\n' \
    "$label" "$rate" "${wait:--}" "$(ratio "$rate" "$base")" "$(runs "${values[@]}")" "${waits[*]}"
  printf -v "rate_$label" '%s' "$rate"
}
train_bench_rate() { # train_bench_rate LOG [RUN]: samples/s at batch $tb_batch
  awk -v b="$tb_batch:" '$1 == "batch" && $2 == b { print $3; exit }' "$1"
}
torch_rate() { # torch_rate LOG RUN: the RESULT line's samples_per_s
  sed -n 's/^RESULT [a-z_]* batch=[0-9]* samples_per_s=\([0-9.]*\).*/\1/p' "$1" | tail -1
}
# torch_figure LABEL CMD...: one PyTorch figure; the median lands in rate_LABEL.
torch_figure() {
  local label=$1; shift
  run_repeats "$label" torch_rate env PYTHONUNBUFFERED=1 "$@"
  if [ "${#values[@]}" -eq 0 ]; then echo "figure: $label ${not_run:-failed}"; return; fi
  local rate
  rate=$(printf '%s\n' "${values[@]}" | median)
  printf 'figure: %s %.0f samples/s  (runs: %s; %s)\n' "$label" "$rate" "$(runs "${values[@]}")" \
    "$(grep -m1 '^device' "${run_logs[0]}")"
  printf -v "rate_$label" '%s' "$rate"
}

# cuda_tests NAME TAG: troupe_cuda_tests TAG (when packed) into
# OUT_DIR/cuda_NAME_tests.log, its result on one line; a failure sets status 1.
cuda_tests() {
  local name=$1 tag=$2 log=$out_dir/cuda_$1_tests.log test_data=$pack/test-data rc
  [ -x "$bin/troupe_cuda_tests" ] || { echo "cuda $name tests: not packed"; return; }
  [ -d "$test_data" ] || test_data=$root/tests/data
  echo "command: TROUPE_TEST_DATA_DIR=$test_data $bin/troupe_cuda_tests '$tag'"
  TROUPE_TEST_DATA_DIR=$test_data timeout -k 5 180 "$bin/troupe_cuda_tests" "$tag" > "$log" 2>&1
  rc=$?
  echo "cuda $name tests: exit $rc$([ "$rc" -eq 77 ] && echo " (skipped: $(head -1 "$log"))"); $(grep -E '^(All tests passed|test cases:)' "$log" | tail -1)"
  [ "$rc" -eq 0 ] || { grep -E -A3 'FAILED|unhandled' "$log" | head -30; status=1; }
}

# --- (a) one replica, no actors ------------------------------------------------
section "(a) CPU, one replica without actors (bench/train_bench, 1 epoch; the ratios' base)" 55
tb_batch=32
run_repeats cpu_train_bench_b32 train_bench_rate "$train_bench" "$data" 1
base=0
if [ "${#values[@]}" -gt 0 ]; then
  base=$(printf '%s\n' "${values[@]}" | median)
  printf 'figure: cpu_train_bench_b32 %.0f samples/s  (runs: %s; %s)\n' "$base" "$(runs "${values[@]}")" \
    "$(grep -m1 '^GEMM kernel' "${run_logs[0]}")"
  # The same runs' batch 128, beside the 128-per-replica figure.
  tb_batch=128
  b128=()
  for log in "${run_logs[@]}"; do b128+=("$(train_bench_rate "$log")"); done
  printf 'figure: cpu_train_bench_b128 %.0f samples/s  (the same runs: %s)\n' \
    "$(printf '%s\n' "${b128[@]}" | grep . | median)" "$(runs "${b128[@]}")"
else
  echo "figure: cpu_train_bench_b32 ${not_run:-failed} (the ratios below print -)"
fi

# --- (b) the actor runtime on the CPU ------------------------------------------
section "(b) CPU, the actor runtime (mnist --devices=cpu, 1 epoch, default store shards)" 55
mnist_figure "cpu_sync_${big}r_b$((32 * big))" --mode=sync --replicas=$big --batch-size=$((32 * big)) --devices=cpu
mnist_figure "cpu_sync_${big}r_b$((128 * big))" --mode=sync --replicas=$big --batch-size=$((128 * big)) --devices=cpu
mnist_figure "cpu_async_${big}r_b$((32 * big))" --mode=async --replicas=$big --batch-size=$((32 * big)) --devices=cpu
mnist_figure "cpu_sync_${mid}r_b$((32 * mid))" --mode=sync --replicas=$mid --batch-size=$((32 * mid)) --devices=cpu
# The default gives the 14 replicas 14 shards (196 pushes a round); fewer,
# larger shards trade step time for messages: the data to pick the default.
mnist_figure "cpu_sync_${big}r_b$((32 * big))_4shards" --mode=sync --replicas=$big --batch-size=$((32 * big)) --devices=cpu --store-shards=$((big < 4 ? big : 4))
# Troupe's scheduler is CAF's work sharing (one queue under one lock) with
# a short poll, chosen on 2 cores; with 16 workers and ~400 messages a round
# that lock may be the limit: CAF's work stealing, the data to pick per size.
mnist_figure "cpu_sync_${big}r_b$((32 * big))_stealing" --mode=sync --replicas=$big --batch-size=$((32 * big)) --devices=cpu --scheduler.policy=stealing

# --- (c) the actor runtime on the GPU ------------------------------------------
section "(c) GPU, the actor runtime (mnist --devices=cuda:0; the store's shards on the host, then on the GPU)" 75
if [ -z "$gpu" ]; then
  echo "skipped: no GPU (nvidia-smi not found or no device)"
else
  # The device store's own checks first: its figures mean little if they fail.
  cuda_tests store '[store]'
  mnist_figure gpu_sync_1r_b32 --mode=sync --replicas=1 --batch-size=32 --devices=cuda:0
  mnist_figure gpu_sync_2r_b64 --mode=sync --replicas=2 --batch-size=64 --devices=cuda:0
  mnist_figure gpu_async_2r_b64 --mode=async --replicas=2 --batch-size=64 --devices=cuda:0
  mnist_figure gpu_sync_1r_b32_store_gpu --mode=sync --replicas=1 --batch-size=32 --devices=cuda:0 --store-device=cuda:0
  mnist_figure gpu_sync_2r_b64_store_gpu --mode=sync --replicas=2 --batch-size=64 --devices=cuda:0 --store-device=cuda:0
  mnist_figure gpu_async_2r_b64_store_gpu --mode=async --replicas=2 --batch-size=64 --devices=cuda:0 --store-device=cuda:0
fi

# --- (d) the Keras convnet --------------------------------------------------------
section "(d) the Keras MNIST convnet (mnist --model=CONVNET, sync 1 replica batch 128, 1 epoch)" 90
convnet=28x28x1-conv32k3relu-maxpool2-conv64k3relu-maxpool2-flatten-dropout0.5-10
echo "CONVNET=$convnet"
saved_repeats=$repeats saved_timeout=$run_timeout
repeats=${TROUPE_FIGURES_CONVNET_REPEATS:-1}
run_timeout=${TROUPE_FIGURES_CONVNET_TIMEOUT_S:-180}
if [ -z "$gpu" ]; then
  echo "skipped on cuda:0: no GPU (nvidia-smi not found or no device)"
else
  # The layers' own checks first: the GPU figure means little if they fail.
  cuda_tests layers '[layers]'
  mnist_figure gpu_convnet_sync_1r_b128 --model="$convnet" --mode=sync --replicas=1 --batch-size=128 --devices=cuda:0
fi
mnist_figure cpu_convnet_sync_1r_b128 --model="$convnet" --mode=sync --replicas=1 --batch-size=128 --devices=cpu
if [ -n "${rate_gpu_convnet_sync_1r_b128:-}" ] && [ -n "${rate_cpu_convnet_sync_1r_b128:-}" ]; then
  echo "ratio: gpu_convnet_sync_1r_b128 / cpu_convnet_sync_1r_b128 = $(ratio "$rate_gpu_convnet_sync_1r_b128" "$rate_cpu_convnet_sync_1r_b128")"
fi
repeats=$saved_repeats run_timeout=$saved_timeout

# --- (e) PyTorch on the same GPU -----------------------------------------------
section "(e) PyTorch on the same GPU, batch 32, training set resident on the device" 100
if [ -z "$gpu" ]; then
  echo "skipped: no GPU (nvidia-smi not found or no device)"
elif ! torch_version=$(python3 -c 'import torch; print(torch.__version__)' 2>/dev/null); then
  echo "skipped: no PyTorch (python3 -c 'import torch' failed)"
  status=1
else
  # torch_mlp.py has eager and fused Adam, no CUDA graph: the graph figure is
  # this script's own, written next to the logs so that it comes back with them.
  cat > "$out_dir/torch_graph.py" <<'PYTHON'
"""PyTorch with the whole training step (forward, loss, backward, Adam) as one
replayed CUDA graph, as PyTorch documents whole-network capture: torch_mlp.py's
model and data, Adam(capturable=True), each batch copied into the graph's
static inputs before its replay. One epoch after --warmup-steps."""
import argparse
import time

import torch

from torch_mlp import find, read_idx

parser = argparse.ArgumentParser()
parser.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
parser.add_argument("--batch", type=int, default=32)
parser.add_argument("--warmup-steps", type=int, default=50)
args = parser.parse_args()
batch = args.batch

torch.backends.cuda.matmul.allow_tf32 = False
images = read_idx(find(args.data, "train-images-idx3-ubyte"), 16)
labels = read_idx(find(args.data, "train-labels-idx1-ubyte"), 8)
count = labels.shape[0]
images = (images.reshape(count, 784).float() / 255.0).cuda()
labels = labels.long().cuda()
order = torch.randperm(count, device="cuda")
images, labels = images[order].contiguous(), labels[order].contiguous()
print(f"device {torch.cuda.get_device_name()}, torch {torch.__version__}, "
      f"{count} training samples resident on the device, Adam capturable, one CUDA graph per step")

torch.manual_seed(42)
model = torch.nn.Sequential(torch.nn.Linear(784, 128), torch.nn.ReLU(),
                            torch.nn.Linear(128, 10)).cuda()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, eps=1e-7, capturable=True)
loss_fn = torch.nn.CrossEntropyLoss()
static_x = images[:batch].clone()
static_y = labels[:batch].clone()

side = torch.cuda.Stream()
side.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(side):
    for _ in range(3):
        optimizer.zero_grad(set_to_none=True)
        loss_fn(model(static_x), static_y).backward()
        optimizer.step()
torch.cuda.current_stream().wait_stream(side)
graph = torch.cuda.CUDAGraph()
optimizer.zero_grad(set_to_none=True)
with torch.cuda.graph(graph):
    static_loss = loss_fn(model(static_x), static_y)
    static_loss.backward()
    optimizer.step()

steps = count // batch


def run(n):
    for i in range(n):
        begin = (i % steps) * batch
        static_x.copy_(images[begin:begin + batch])
        static_y.copy_(labels[begin:begin + batch])
        graph.replay()


run(args.warmup_steps)
torch.cuda.synchronize()
start = time.perf_counter()
run(steps)
torch.cuda.synchronize()
elapsed = time.perf_counter() - start
rate = steps * batch / elapsed
print(f"batch {batch:5d}: {steps} steps, {steps * batch} samples in {elapsed:.3f} s = "
      f"{rate:.0f} samples/s ({1e6 * elapsed / steps:.1f} us/step), last loss {static_loss.item():.4f}")
print(f"RESULT torch_graph batch={batch} samples_per_s={rate:.0f}")
PYTHON
  echo "torch $torch_version"
  torch_figure torch_eager_b32 python3 "$root/bench/gpu/torch_mlp.py" --data "$data" --batches 32
  torch_figure torch_fused_b32 python3 "$root/bench/gpu/torch_mlp.py" --data "$data" --batches 32 --fused
  torch_figure torch_graph_b32 PYTHONPATH="$root/bench/gpu" python3 "$out_dir/torch_graph.py" --data "$data" --batch 32
  if [ -n "${rate_gpu_sync_1r_b32:-}" ]; then
    echo "ratio: gpu_sync_1r_b32 / torch_eager_b32 = $(ratio "$rate_gpu_sync_1r_b32" "${rate_torch_eager_b32:-0}");" \
      "gpu_sync_1r_b32 / torch_graph_b32 = $(ratio "$rate_gpu_sync_1r_b32" "${rate_torch_graph_b32:-0}")"
  fi
  if [ -n "${rate_gpu_sync_1r_b32_store_gpu:-}" ]; then # the store on the GPU against PyTorch's best
    echo "ratio: gpu_sync_1r_b32_store_gpu / torch_graph_b32 = $(ratio "$rate_gpu_sync_1r_b32_store_gpu" "${rate_torch_graph_b32:-0}");" \
      "gpu_sync_1r_b32_store_gpu / gpu_sync_1r_b32 = $(ratio "$rate_gpu_sync_1r_b32_store_gpu" "$rate_gpu_sync_1r_b32")"
  fi
  if [ "$SECONDS" -lt $((start + budget)) ]; then
    if jax_version=$(timeout 30 python3 -c 'import jax; print(jax.__version__)' 2>/dev/null); then
      echo "jax $jax_version imports (this script measures no JAX figure)"
    else
      echo "jax: does not import here (this script measures no JAX figure)"
    fi
  fi
fi

echo
echo "done in $((SECONDS - start)) s, exit $status; logs in $out_dir"
exit "$status"
