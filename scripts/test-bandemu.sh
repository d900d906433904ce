#!/usr/bin/env bash
# Runs the banded CUDA kernels on the CPU (internal/bandemu) against package
# banded. The kernels' sources live outside the package directory, which
# Go's build cache does not hash, so their hash goes into CGO_CXXFLAGS to
# rebuild the emulation whenever they change.
# Usage: scripts/test-bandemu.sh [go test flags]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
h=$(cat ptx/src/band_*.cuh ptx/src/banded.cu ptx/src/transpose.cuh ptx/src/common.cuh internal/bandemu/emu.h internal/bandemu/fibers.h | sha256sum | cut -c1-16)
CGO_CXXFLAGS="-O2 -g -DBAND_SRC_HASH=$h" exec go test -tags cudaemu "$@" ./internal/bandemu
