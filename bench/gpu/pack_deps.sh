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
#                      troupe_gpu_train_bench built here, and in lib/ the shared
#                      libraries they load apart from glibc's and CUDA's own
#                      (run_gpu_checks.sh --prebuilt runs these, building nothing)
# Usage: bench/gpu/pack_deps.sh [--prebuilt=BUILD_DIR] [DEST]
#   BUILD_DIR  a configured build with CUDA (e.g. build-cuda); both targets are
#              built there first. DEST defaults to .gpu-deps/ in the repo.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
prebuilt_build=
positional=()
for arg in "$@"; do
  case $arg in
    --prebuilt=*) prebuilt_build=${arg#--prebuilt=} ;;
    -*) echo "unknown option $arg (usage: pack_deps.sh [--prebuilt=BUILD_DIR] [DEST])" >&2; exit 2 ;;
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
  cmake --build "$prebuilt_build" -j "$(nproc)" --target troupe_cuda_tests troupe_gpu_train_bench
  rm -rf "$dest/prebuilt"
  mkdir -p "$dest/prebuilt/lib"
  binaries=("$prebuilt_build/tests/cuda/troupe_cuda_tests" "$prebuilt_build/bench/gpu/troupe_gpu_train_bench")
  cp "${binaries[@]}" "$dest/prebuilt/"
  # The libraries ldd resolves, less glibc's (the GPU machine's own must serve)
  # and CUDA's (its toolkit's: the runtime must match its driver).
  ldd "${binaries[@]}" | awk '/=> \// { print $3 }' | sort -u \
    | grep -Ev '/(libc|libm|libdl|librt|libpthread|ld-linux[^/]*)\.so|/libcu(da|dart|blas|blasLt)\.so' \
    | while read -r lib; do cp -L "$lib" "$dest/prebuilt/lib/"; done
  echo "prebuilt: $(ls "$dest/prebuilt/lib" | tr '\n' ' ')"
fi

# Keep the pack out of git (it travels to the GPU machine as a carried path).
if [ -d "$root/.git" ] && ! grep -qx '/.gpu-deps/' "$root/.git/info/exclude" 2>/dev/null; then
  echo '/.gpu-deps/' >> "$root/.git/info/exclude"
fi
du -sh "$dest"/* "$dest"/prebuilt/* 2>/dev/null || true
