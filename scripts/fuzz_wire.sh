#!/usr/bin/env bash
# A long wire-fuzz campaign: records a real job, then replays mutations of its
# streams into a node (500 connections) and from a fake node into
# coordinators (100 runs), as tests/wire/fuzz_test.cpp does with fewer.
# Installs what is missing and builds into build/ first. Prints the seed and
# the memory figures; every stream that broke a process is saved under
# build/wire-fuzz-failures/ and replays with
#   build/tests/troupe_wire_fuzz --replay=FILE --target=node|coordinator
#   scripts/fuzz_wire.sh [--seed=N] [--node-connections=N] [--coordinator-runs=N]
set -euo pipefail
# shellcheck source=scripts/setup.sh
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
troupe_build --target troupe_wire_fuzz
cd "$troupe_root/build"
exec tests/troupe_wire_fuzz --save="$troupe_root/build/wire-fuzz-failures" "$@"
