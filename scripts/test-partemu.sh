#!/usr/bin/env bash
# Runs the partition CUDA kernels on the CPU (internal/partemu) against
# their twins partition.SolveSegmented and partition.Solve, bit for bit.
# As in test-bandemu.sh, the kernels' sources (and the emulation header
# shared with bandemu) are hashed into CGO_CXXFLAGS so that the emulation
# is rebuilt when they change.
# Usage: scripts/test-partemu.sh [go test flags]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
h=$(cat ptx/src/segment.cuh ptx/src/partition.cuh ptx/src/stream.cuh ptx/src/lanes.cuh ptx/src/cstream.cuh ptx/src/lseg.cuh ptx/src/lstream.cuh ptx/src/common.cuh ptx/src/signal.cuh internal/bandemu/emu.h | sha256sum | cut -c1-16)
CGO_CXXFLAGS="-O2 -g -DPART_SRC_HASH=$h" exec go test -tags cudaemu "$@" ./internal/partemu
