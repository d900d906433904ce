#!/usr/bin/env bash
# Runs the SPIKE CUDA kernels on the CPU (internal/spikeemu) against package
# spike, bit for bit. As in test-bandemu.sh, the kernels' sources are hashed
# into CGO_CXXFLAGS so that the emulation is rebuilt when they change.
# Usage: scripts/test-spikeemu.sh [go test flags]   (-short: the quick cases)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
h=$(cat ptx/src/band_*.cuh ptx/src/banded.cu internal/bandemu/emu.h internal/bandemu/fibers.h | sha256sum | cut -c1-16)
CGO_CXXFLAGS="-O2 -DBAND_SRC_HASH=$h" exec go test -tags cudaemu "$@" ./internal/spikeemu
