#!/usr/bin/env bash
# Runs the complex CUDA kernels (complex.cuh, cpart.cuh and the complex
# pivoting band batch kernel, band_cpivot.cuh) on the CPU
# (internal/complexemu) against packages tridiag and banded, bit for bit.
# The kernels'
# sources live outside the package directory, which Go's build cache does
# not hash, so their hash goes into CGO_CXXFLAGS to rebuild the emulation
# whenever they change.
# Usage: scripts/test-complexemu.sh [go test flags]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
h=$(cat ptx/src/complex.cuh ptx/src/cpart.cuh ptx/src/partition.cuh ptx/src/signal.cuh ptx/src/common.cuh ptx/src/band_cpivot.cuh ptx/src/band_pivot.cuh ptx/src/band_common.cuh internal/complexemu/*.h internal/bandemu/fibers.h | sha256sum | cut -c1-16)
CGO_CXXFLAGS="-O2 -g -DCOMPLEX_SRC_HASH=$h" exec go test -tags cudaemu "$@" ./internal/complexemu
