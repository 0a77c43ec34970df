#!/usr/bin/env bash
# Quick start: installs what is missing, builds, and trains the Keras MNIST example's model
# (MLP 784-128relu-10, Adam, 5 epochs, batch 32, sync over one replica per
# core) on Fashion-MNIST. Extra arguments go to the example, e.g.
#   scripts/quickstart.sh --mode=async --replicas=2
set -euo pipefail
# shellcheck source=scripts/setup.sh
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
troupe_build --target mnist
exec "$troupe_root/build/examples/mnist" "$@"
