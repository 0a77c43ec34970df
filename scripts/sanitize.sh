#!/usr/bin/env bash
# The whole test suite under AddressSanitizer, LeakSanitizer and
# UndefinedBehaviorSanitizer: installs what is missing, builds into
# build-asan/ (no CUDA), runs ctest: ~16 minutes on 2 cores. Not part of CI:
# under the sanitizers the multi-process tests run several times slower, and a
# process may miss a test's exit bound when two of them share the 2 cores.
#   scripts/sanitize.sh [ctest options]
set -euo pipefail
# shellcheck source=scripts/setup.sh
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
build="$troupe_root/build-asan"
flags="-fsanitize=address,undefined -fno-omit-frame-pointer"
cmake -S "$troupe_root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTROUPE_CUDA=OFF \
  -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="$flags" >/dev/null
cmake --build "$build" -j "$(nproc 2>/dev/null || echo 2)"
# CAF 0.17's init_fun_factory dereferences an empty argument tuple's null
# pointer for every actor spawned without arguments: CAF's, not ours.
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:suppressions=$troupe_root/scripts/ubsan.supp"
# The packaging tests build a program without the sanitizers against the
# instrumented libtroupe, so ASan's runtime loads after libc there; and the
# fuzz test bounds a node's memory, which ASan's default quarantine (256 MB
# of freed blocks held back) would fill.
export ASAN_OPTIONS="detect_leaks=1:verify_asan_link_order=0:quarantine_size_mb=16"
export LSAN_OPTIONS="suppressions=$troupe_root/scripts/lsan.supp"
cd "$build"
ctest --output-on-failure --timeout 900 "$@"
