#!/usr/bin/env bash
# Runs the complex tridiagonal CUDA kernels (complex.cuh, cpart.cuh) on the CPU
# (internal/complexemu) against package tridiag, bit for bit. The kernels'
# sources live outside the package directory, which Go's build cache does
# not hash, so their hash goes into CGO_CXXFLAGS to rebuild the emulation
# whenever they change.
# Usage: scripts/test-complexemu.sh [go test flags]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
h=$(cat ptx/src/complex.cuh ptx/src/cpart.cuh ptx/src/partition.cuh ptx/src/signal.cuh ptx/src/common.cuh internal/complexemu/emu.h internal/complexemu/cpart_emu.h | sha256sum | cut -c1-16)
CGO_CXXFLAGS="-O2 -g -DCOMPLEX_SRC_HASH=$h" exec go test -tags cudaemu "$@" ./internal/complexemu
