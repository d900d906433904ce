#!/usr/bin/env bash
# Builds the GPU test and bench binaries into .gpu/ (ignored by git), packs
# them into .gpu-pack/gpu.tar.xz (ignored) to be carried to the GPU machine,
# and run there with: bash .gpu/run.sh
# The GPU machine has no Go; these binaries link libcuda.so.1 dynamically.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
mkdir -p .gpu
flags=(-tags cuda -trimpath -ldflags=-s\ -w)
for pkg in $(go list -tags cuda -f '{{if .TestGoFiles}}{{.ImportPath}}{{end}}' ./... | grep -E '/cuda$|/bench$|/examples/|/cmd/bandsolve$' || true); do
  name=$(basename "$pkg")
  go test -c "${flags[@]}" -o ".gpu/$name.test" "$pkg"
done
if [ -d cmd/bandsolve ]; then
  # -buildvcs: the bench records the commit in its CSV records.
  go build "${flags[@]}" -buildvcs=true -o .gpu/bandsolve ./cmd/bandsolve
fi
cp scripts/gpu-run.sh .gpu/run.sh
cp scripts/baseline.sh scripts/lapack-gbsv.py .gpu/
commit=$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
git diff --quiet HEAD 2>/dev/null || commit="$commit+dirty"
echo "$commit" > .gpu/commit.txt
du -sh .gpu
# The binaries are larger than the device tool carries (64 MiB); an xz
# archive with a large dictionary (-9e: 64 MiB) finds the code they share
# and is about a fifteenth of their size (9 MiB for 137 MiB; -6, a quarter).
# On the GPU machine:
#   mkdir -p .gpu && tar -C .gpu -xJf .gpu-pack/gpu.tar.xz
mkdir -p .gpu-pack
tar -C .gpu -cf - . | xz -T0 -9e > .gpu-pack/gpu.tar.xz
du -sh .gpu-pack/gpu.tar.xz
