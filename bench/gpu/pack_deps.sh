#!/usr/bin/env bash
# Packs, on a Debian machine of ours, what run_gpu_checks.sh needs on a GPU
# machine that has CUDA, CMake and PyTorch but none of our Debian packages:
#   DEST/deps.tar.xz   a prefix with Eigen, Catch2 (headers + CMake configs),
#                      zlib (header + static lib) and OpenBLAS (cblas header +
#                      a static lib cut down to what cblas_sgemm pulls in)
#   DEST/fashion-mnist the four Fashion-MNIST files, when this machine has them
# Usage: bench/gpu/pack_deps.sh [DEST]   (DEST defaults to .gpu-deps/ in the repo)
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
dest=${1:-$root/.gpu-deps}
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

# OpenBLAS: the whole static library is ~58 MB; the objects that a call of
# cblas_sgemm and openblas_set_num_threads pulls in are about half of it.
cp -L "/usr/include/$multiarch/cblas-openblas.h" "/usr/include/$multiarch/openblas_config.h" \
  "$prefix/include/$multiarch/"
cat > "$stage/probe.c" <<'PROBE'
#include <cblas-openblas.h>
int main(void) {
  float a[4] = {1, 2, 3, 4}, b[4] = {1, 0, 0, 1}, c[4];
  openblas_set_num_threads(1);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 2, 2, 2, 1.f, a, 2, b, 2, 0.f, c, 2);
  return c[3] == 4.f ? 0 : 1;
}
PROBE
openblas_a=$(readlink -f "$libdir/libopenblas.a")
gcc -I"/usr/include/$multiarch" "$stage/probe.c" "$openblas_a" -lpthread -lm \
  -Wl,-Map="$stage/probe.map" -o "$stage/probe"
"$stage/probe"
grep -o "libopenblas[^ ]*\.a([^)]*)" "$stage/probe.map" | sed 's/.*(\(.*\))/\1/' | sort -u \
  > "$stage/members.txt"
mkdir "$stage/objects"
(cd "$stage/objects" && xargs -a "$stage/members.txt" ar x "$openblas_a" \
  && xargs -a "$stage/members.txt" ar rcs "$prefix/lib/libopenblas.a")
gcc -I"$prefix/include/$multiarch" "$stage/probe.c" "$prefix/lib/libopenblas.a" -lpthread -lm \
  -o "$stage/probe_small"
"$stage/probe_small"

mkdir -p "$dest"
tar -C "$prefix" -cJf "$dest/deps.tar.xz" .
if ls "$data_dir"/train-images-idx3-ubyte* >/dev/null 2>&1; then
  mkdir -p "$dest/fashion-mnist"
  cp "$data_dir"/*-ubyte* "$dest/fashion-mnist/"
else
  echo "note: no Fashion-MNIST in $data_dir; the bench will use tests/data (a slice)"
fi
# Keep the pack out of git (it travels to the GPU machine as a carried path).
if [ -d "$root/.git" ] && ! grep -qx '/.gpu-deps/' "$root/.git/info/exclude" 2>/dev/null; then
  echo '/.gpu-deps/' >> "$root/.git/info/exclude"
fi
du -sh "$dest"/*
