#!/usr/bin/env bash
# Builds the GPU test and bench binaries into .gpu/ (ignored by git), ready
# to be carried to the GPU machine and run there with: bash .gpu/run.sh
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
  go build "${flags[@]}" -o .gpu/bandsolve ./cmd/bandsolve
fi
cp scripts/gpu-run.sh .gpu/run.sh
du -sh .gpu
