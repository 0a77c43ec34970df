#!/usr/bin/env bash
# Runs the whole test suite: installs what is missing, builds everything
# (CUDA code too where nvcc exists), runs ctest. Non-zero on any failure.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
troupe_build
cd "$troupe_root/build"
ctest --output-on-failure --timeout 600 "$@"
