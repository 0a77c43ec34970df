#!/usr/bin/env bash
# Runs the whole test suite: installs what is missing, builds everything
# (CUDA code too where nvcc exists), runs ctest. Non-zero on any failure.
set -euo pipefail
# shellcheck source=scripts/setup.sh
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
# shellcheck disable=SC2119 # the script's options are ctest's, not the build's
troupe_build
cd "$troupe_root/build"
ctest --output-on-failure --timeout 600 "$@"
