#!/usr/bin/env bash
# Rebuilds ptx/*.ptx from ptx/src/*.cu with the pinned toolkit.
# Usage: scripts/gen-ptx.sh [outdir]   (default: ptx/)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/ptx}
nvcc --version | grep -q "release 11.8" || { echo "gen-ptx: need nvcc 11.8 (scripts/install-cuda-toolkit.sh)" >&2; exit 1; }
# Flags are pinned: changing them changes the committed PTX.
# -fmad=false keeps a*b+c as two rounded operations, as Go computes it, so
# that kernels agree with their CPU twins bit for bit.
# cluster.cu holds Hopper's thread-block-cluster kernels: compute_90.
NVCCFLAGS=(-ptx -O3 -std=c++14 -fmad=false)
for src in "$root"/ptx/src/*.cu; do
  name=$(basename "$src" .cu)
  arch=compute_80
  [ "$name" = cluster ] && arch=compute_90
  nvcc "${NVCCFLAGS[@]}" -arch=$arch -I"$root/ptx/src" -o "$out/$name.ptx" "$src"
done
# The kernel table (internal/gpu/kernels) follows the kernels' declarations
# and the PTX; regenerate it with the PTX it describes.
if [ "$out" = "$root/ptx" ]; then
  (cd "$root/internal/gpu/kernels" && go run ./gen)
fi
