#!/usr/bin/env bash
# Packs, on a Debian machine of ours, what run_gpu_checks.sh needs on a GPU
# machine that has CUDA, CMake and PyTorch but none of our Debian packages:
#   DEST/deps.tar.xz   a prefix with Eigen, Catch2 (headers + CMake configs),
#                      zlib (header + static lib); the CPU GEMMs are Troupe's
#                      own (model/backend/cpu/gemm), so no BLAS travels
#   DEST/fashion-mnist the four Fashion-MNIST files, when this machine has them
#   DEST/test-data     a copy of tests/data (the tests find it through
#                      $TROUPE_TEST_DATA_DIR, which run_gpu_checks.sh sets)
#   DEST/prebuilt/     with --prebuilt: troupe_cuda_tests and
#                      troupe_gpu_train_bench built here, and mnist and
#                      train_bench (the actor runtime and the single-replica
#                      loop), and in lib/ the shared libraries they load apart
#                      from glibc's and CUDA's own (run_gpu_checks.sh --prebuilt
#                      and run_store_figures.sh run these, building nothing).
#                      A library over 1 MiB that only mnist or train_bench loads
#                      (libtroupe, CAF, OpenSSL, protobuf, and OpenBLAS, which
#                      train_bench links to print its GEMM beside ours) goes in
#                      as lib/NAME.xz, which run_store_figures.sh unpacks: so
#                      the whole of DEST stays under 64 MiB with room for the
#                      checkout beside it on the GPU machine
# Usage: bench/gpu/pack_deps.sh [--prebuilt=BUILD_DIR] [--no-build] [DEST]
#   BUILD_DIR  a configured build with CUDA (e.g. build-cuda); the four targets
#              are built there first (mnist and train_bench only where the
#              build has them: a TROUPE_MODEL_ONLY build packs the other two)
#   --no-build pack the binaries BUILD_DIR already has, building nothing
#   DEST defaults to .gpu-deps/ in the repo. Exits 3 when DEST ends up over
#   64 MiB.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
prebuilt_build=
build_binaries=1
positional=()
for arg in "$@"; do
  case $arg in
    --prebuilt=*) prebuilt_build=${arg#--prebuilt=} ;;
    --no-build) build_binaries= ;;
    -*) echo "unknown option $arg (usage: pack_deps.sh [--prebuilt=BUILD_DIR] [--no-build] [DEST])" >&2; exit 2 ;;
    *) positional+=("$arg") ;;
  esac
done
dest=${positional[0]:-$root/.gpu-deps}
data_dir=${TROUPE_DATA_DIR:-/usr/share/datasets/fashion-mnist}
multiarch=$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
libdir=/usr/lib/$multiarch

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
prefix=$stage/prefix
mkdir -p "$prefix/include/$multiarch" "$prefix/lib/cmake" "$prefix/share/eigen3"

# Eigen and Catch2: headers and their relocatable CMake configs.
mkdir -p "$prefix/include/eigen3"
cp -r /usr/include/eigen3/Eigen /usr/include/eigen3/signature_of_eigen3_matrix_library \
  "$prefix/include/eigen3/"
cp -r /usr/share/eigen3/cmake "$prefix/share/eigen3/"
cp -r /usr/include/catch2 "$prefix/include/"
cp -r /usr/lib/cmake/Catch2 "$prefix/lib/cmake/"
cp /usr/lib/libCatch2WithMain.a "$prefix/lib/" # its CMake config checks the file exists

# zlib: static, so the GPU machine needs no zlib development package.
cp -L /usr/include/zlib.h /usr/include/zconf.h "$prefix/include/"
cp -L "$libdir/libz.a" "$prefix/lib/"

mkdir -p "$dest"
tar -C "$prefix" -cJf "$dest/deps.tar.xz" .
if ls "$data_dir"/train-images-idx3-ubyte* >/dev/null 2>&1; then
  mkdir -p "$dest/fashion-mnist"
  cp "$data_dir"/*-ubyte* "$dest/fashion-mnist/"
else
  echo "note: no Fashion-MNIST in $data_dir; the bench will use tests/data (a slice)"
fi
rm -rf "$dest/test-data"
cp -r "$root/tests/data" "$dest/test-data"

if [ -n "$prebuilt_build" ]; then
  figure_targets=(mnist train_bench)
  if [ -n "$build_binaries" ]; then
    cmake --build "$prebuilt_build" -j "$(nproc)" --target troupe_cuda_tests troupe_gpu_train_bench
    cmake --build "$prebuilt_build" -j "$(nproc)" --target "${figure_targets[@]}" \
      || echo "note: mnist and train_bench did not build in $prebuilt_build (a TROUPE_MODEL_ONLY build?);" \
              "packing without them (run_store_figures.sh needs them)" >&2
  fi
  rm -rf "$dest/prebuilt"
  mkdir -p "$dest/prebuilt/lib"
  binaries=("$prebuilt_build/tests/cuda/troupe_cuda_tests" "$prebuilt_build/bench/gpu/troupe_gpu_train_bench")
  figure_binaries=()
  for binary in "$prebuilt_build/examples/mnist" "$prebuilt_build/bench/train_bench"; do
    if [ -x "$binary" ]; then figure_binaries+=("$binary"); else echo "note: no $binary to pack" >&2; fi
  done
  cp "${binaries[@]}" "${figure_binaries[@]}" "$dest/prebuilt/"
  # The libraries ldd resolves, less glibc's (the GPU machine's own must serve)
  # and CUDA's (its toolkit's: the runtime must match its driver).
  shared_libs() {
    ldd "$@" | awk '/=> \// { print $3 }' | sort -u \
      | grep -Ev '/(libc|libm|libdl|librt|libpthread|ld-linux[^/]*)\.so|/libcu(da|dart|blas|blasLt)\.so' || true
  }
  cuda_libs=$(shared_libs "${binaries[@]}")
  figure_libs=
  [ ${#figure_binaries[@]} -eq 0 ] || figure_libs=$(shared_libs "${figure_binaries[@]}")
  printf '%s\n' "$cuda_libs" "$figure_libs" | sort -u | while read -r lib; do
    [ -n "$lib" ] || continue
    # Over 1 MiB and loaded only by the figure binaries: compressed (the CUDA
    # pair's run_gpu_checks.sh takes lib/ as it is, so theirs stay plain).
    if [ "$(stat -L -c %s "$lib")" -gt $((1 << 20)) ] && ! grep -qxF "$lib" <<< "$cuda_libs"; then
      xz -T0 -6 -c "$lib" > "$dest/prebuilt/lib/$(basename "$lib").xz"
    else
      cp -L "$lib" "$dest/prebuilt/lib/"
    fi
  done
  echo "prebuilt: $(ls "$dest/prebuilt" | tr '\n' ' ')"
  echo "prebuilt/lib: $(ls "$dest/prebuilt/lib" | tr '\n' ' ')"
fi

# Keep the pack out of git: it is copied to the GPU machine beside the checkout.
if [ -d "$root/.git" ] && ! grep -qx '/.gpu-deps/' "$root/.git/info/exclude" 2>/dev/null; then
  echo '/.gpu-deps/' >> "$root/.git/info/exclude"
fi
du -sh "$dest"/* "$dest"/prebuilt/* 2>/dev/null || true
total=$(du -sb "$dest" | cut -f1)
echo "total: $((total >> 20)) MiB in $dest (the pack is kept under 64 MiB)"
if [ "$total" -gt $((64 << 20)) ]; then
  echo "error: $dest is over 64 MiB, the most a pack may hold: pack fewer binaries, or compress more of lib/" >&2
  exit 3
fi
