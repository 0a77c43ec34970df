#!/usr/bin/env bash
# Installs what Troupe needs on Debian 12 (only what is missing), then
# configures and builds Release into build/. Sourced by quickstart.sh and
# test.sh; safe to run again: a second run installs nothing and rebuilds
# incrementally.
set -euo pipefail

troupe_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

troupe_packages=(
  cmake g++ make           # toolchain
  libcaf-dev libssl-dev    # actors, middleman, TLS
  libeigen3-dev libopenblas-dev
  libfmt-dev nlohmann-json3-dev zlib1g-dev
  catch2 openssl iproute2  # tests (certificates, network namespaces)
  dpkg-dev                 # the Debian packages (cpack -G DEB: dpkg-shlibdeps)
  dataset-fashion-mnist    # the default data
  libonnx-dev libprotobuf-dev protobuf-compiler  # ONNX export
  python3-numpy python3-onnx   # tests: .npy data, the ONNX checker
  python3-matplotlib       # the plots (scripts/plot_runs.py, compare_modes.sh)
)

troupe_install_missing() {
  local missing=()
  for package in "${troupe_packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
      missing+=("$package")
    fi
  done
  if [ ${#missing[@]} -eq 0 ]; then
    return 0
  fi
  echo "troupe: installing ${missing[*]}"
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    sudo="sudo"
  fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

troupe_build() {
  local jobs
  jobs="$(nproc 2>/dev/null || echo 2)"
  cmake -S "$troupe_root" -B "$troupe_root/build" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$troupe_root/build" -j "$jobs" "$@"
}

troupe_install_missing
